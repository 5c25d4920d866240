//go:build unix

package connector

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the server in a process group of its own, so
// killGroup reaches what it starts (npx runs node as a child).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// terminateGroup asks the whole group to stop.
func terminateGroup(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) // ESRCH once the group is gone
}

// killGroup kills what is left of the group. Safe after the leader exited:
// a process group id is not reused while any member lives.
func killGroup(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
