package connector

// The stdio servers' processes: their environment and the tail of their
// stderr that explains a failed start.

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// baseEnv is what a stdio server inherits from the app: enough to find and
// run node, python and their package caches, and nothing else — the app's
// own credentials stay out of third-party processes.
func baseEnv() []string {
	keep := []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM",
		"TMPDIR", "TEMP", "TMP", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
		"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
		"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "NVM_DIR", "VOLTA_HOME", "UV_CACHE_DIR", "npm_config_cache"}
	if runtime.GOOS == "windows" {
		keep = append(keep, "USERPROFILE", "APPDATA", "LOCALAPPDATA", "ProgramFiles", "ProgramFiles(x86)",
			"SystemRoot", "SystemDrive", "ComSpec", "PATHEXT", "WINDIR", "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE")
	}
	var env []string
	for _, k := range keep {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func envList(m map[string]string) []string {
	var out []string
	for _, k := range sortedKeys(m) {
		out = append(out, k+"="+m[k])
	}
	return out
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// tail keeps the last bytes a stdio server wrote to stderr, to explain a
// failed start.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// stderrError is a stdio server failure with what it printed.
type stderrError struct {
	err    error
	stderr string
}

func (e *stderrError) Error() string {
	s := e.stderr
	if len(s) > 1500 {
		s = "…" + s[len(s)-1500:]
	}
	return fmt.Sprintf("%s; the server printed: %s", fault.Message(e.err), s)
}

func (e *stderrError) Unwrap() error { return e.err }
