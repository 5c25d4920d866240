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
		pid := strings.TrimSpace(string(b))
		if pid == "" {
			pid = "unknown"
		}
		return nil, fmt.Errorf("another Rerun (pid %s) is already using %s; close it, or pass another --data-dir", pid, dir)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}
