//go:build windows

package tool

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/rerun-build/rerun-desktop/backend/fault"
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

// commandPlaces is nil on Windows: see quoteCommand.
func commandPlaces(string) map[int]shellRef { return nil }

// quoteCommand writes a variable's value into a cmd.exe command. cmd.exe has
// no quoting that every program reads back the same way, so a value is
// written as it is when it holds none of cmd.exe's special characters, and
// refused otherwise: such a value goes in env and is written %NAME%.
func quoteCommand(_ map[int]shellRef, _ int, name, value string) (string, error) {
	if strings.ContainsAny(value, "&|<>^\"%!()\r\n") {
		return "", fault.Invalid("the value of %s holds characters cmd.exe would read as syntax; pass it in env instead, e.g. env {\"X\": \"${%s}\"} and %%X%% in the command", name, name)
	}
	return value, nil
}
