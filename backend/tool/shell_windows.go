//go:build windows

package tool

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

const (
	shellPath   = "cmd.exe"
	shellFlag   = "/C"
	shellName   = "cmd.exe /C"
	defaultPath = `C:\Windows\system32;C:\Windows`
)

// setProcessGroup starts the command in a new process group so a console
// Ctrl-Break for the app does not reach it; killGroup ends its tree.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// killGroup kills the command and every process it started (taskkill /T walks
// the tree by parent id). It is safe to call more than once and after the
// command has exited.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	kill := exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(cmd.Process.Pid))
	if kill.Run() != nil {
		_ = cmd.Process.Kill()
	}
}

// platformEnv adds what cmd.exe and most Windows programs need to start.
func platformEnv(home string) []string {
	env := []string{"USERPROFILE=" + home}
	for _, k := range []string{"SystemRoot", "ComSpec", "PATHEXT", "TEMP", "TMP", "WINDIR"} {
		if v := os.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}
