//go:build windows

package connector

import (
	"os/exec"
	"strconv"
	"syscall"
)

// setProcessGroup starts the server in a new process group so a console
// Ctrl-Break for the app does not reach it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// terminateGroup kills the server and every process it started while the
// server still runs: taskkill /T walks the tree by parent id, which it can
// no longer do once the server has exited. Windows has no polite signal
// for a console-less process.
func terminateGroup(cmd *exec.Cmd) {
	kill := exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(cmd.Process.Pid))
	if kill.Run() != nil {
		_ = cmd.Process.Kill()
	}
}

// killGroup makes sure the server itself is gone.
func killGroup(cmd *exec.Cmd) {
	_ = cmd.Process.Kill()
}
