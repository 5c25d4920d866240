//go:build unix

package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockDataDir takes an exclusive lock on the data directory so that a second
// Rerun on the same data cannot execute the same runs twice. The lock goes
// with the process, even when it is killed.
func lockDataDir(dir string) (release func(), err error) {
	path := filepath.Join(dir, "rerun.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock data directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		return nil, fmt.Errorf("%s is already using %s; quit it (the desktop app: Quit Rerun in its tray menu), or pass another --data-dir", holder(string(b)), dir)
	}
	f.Truncate(0)
	// The pid and the command line: a second Rerun says which one holds it.
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"+strings.Join(append([]string{filepath.Base(os.Args[0])}, os.Args[1:]...), " ")+"\n"), 0)
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// holder names the process of a lock file's content.
func holder(content string) string {
	pid, cmd, _ := strings.Cut(strings.TrimSpace(content), "\n")
	if pid == "" {
		return "another Rerun"
	}
	if cmd = strings.TrimSpace(cmd); cmd != "" {
		return fmt.Sprintf("another Rerun (pid %s, %q)", pid, cmd)
	}
	return fmt.Sprintf("another Rerun (pid %s)", pid)
}
