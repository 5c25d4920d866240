//go:build !windows

package browser

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// lockWait bounds how long a killed browser may take to go away.
const lockWait = 5 * time.Second

// processAlive reports whether pid runs (a zombie does not).
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	state, _, ok := procStat(pid)
	return !ok || state != 'Z'
}

// procStat reads the state and process group of pid from /proc (Linux only).
func procStat(pid int) (state byte, pgrp int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return 0, 0, false
	}
	pgrp, err = strconv.Atoi(f[2])
	return f[0][0], pgrp, err == nil
}

// killTree kills the browser pid and every process of its process group:
// the browser is started as a group leader, and its renderer, GPU and
// utility processes stay in its group.
func killTree(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// treeAlive reports whether a process of pid's group, or pid itself, still
// runs.
func treeAlive(pid int) bool {
	if processAlive(pid) {
		return true
	}
	if runtime.GOOS != "linux" {
		err := syscall.Kill(-pid, 0)
		return err == nil || errors.Is(err, syscall.EPERM)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, pgrp, ok := procStat(p); ok && pgrp == pid && state != 'Z' {
			return true
		}
	}
	return false
}

// waitGone waits up to d for pid's whole tree to exit.
func waitGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for treeAlive(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// cmdline returns the command line of pid, arguments separated by NUL on
// Linux and by spaces elsewhere.
func cmdline(pid int) (string, bool) {
	if runtime.GOOS == "linux" {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		return string(b), err == nil
	}
	out, err := exec.Command("ps", "-ww", "-o", "command=", "-p", strconv.Itoa(pid)).Output()
	return strings.TrimSpace(string(out)), err == nil
}
