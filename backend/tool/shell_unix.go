//go:build unix

package tool

import (
	"os/exec"
	"syscall"
)

const (
	shellPath   = "/bin/sh"
	shellFlag   = "-c"
	shellName   = "/bin/sh -c"
	defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

// killGroup kills the command's whole process group. It is safe to call
// more than once and after the shell has exited.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // ESRCH once the group is gone
}

func platformEnv(home string) []string { return nil }

// commandPlaces reads where each $ of a command stands for /bin/sh.
func commandPlaces(command string) map[int]shellRef { return shellPlaces(command) }

// quoteCommand writes a variable's value into a /bin/sh command: quoted for
// the place of its reference (shellquote.go), so the shell takes it as data.
func quoteCommand(places map[int]shellRef, at int, name, value string) (string, error) {
	return quoteForShell(places[at], name, value)
}
