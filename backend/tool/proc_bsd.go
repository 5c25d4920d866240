//go:build unix && !linux

package tool

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the command in a new process group led by the shell,
// so killGroup reaches everything it starts. There is no parent-death
// signal here: a crash leaves the command to finish or time out alone.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
