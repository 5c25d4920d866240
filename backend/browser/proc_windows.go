//go:build windows

package browser

import (
	"os"
	"os/exec"
	"strconv"
	"time"
)

const lockWait = 5 * time.Second

func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}

// killTree ends the browser and its child processes.
func killTree(pid int) {
	_ = exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(pid)).Run()
}

func treeAlive(pid int) bool { return processAlive(pid) }

func waitGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for processAlive(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// cmdline is not read on Windows: Chromium locks its profile with a file
// the OS releases when the process dies, so no stale lock needs judging.
func cmdline(int) (string, bool) { return "", false }
