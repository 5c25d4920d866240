//go:build darwin

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// sandboxExec is macOS's sandbox runner (deprecated by Apple, still
// shipped and used by Chromium and Bazel).
const sandboxExec = "/usr/bin/sandbox-exec"

var systemPaths = []string{"/usr", "/bin", "/sbin", "/System", "/Library", "/opt/homebrew", "/usr/local",
	"/private/etc", "/private/var/db", "/dev"}

func available() (bool, string) {
	if _, err := os.Stat(sandboxExec); err != nil {
		return false, "macOS's sandbox-exec is missing (" + err.Error() + ")"
	}
	return true, "sandbox-exec"
}

// profile is p as a sandbox-exec profile: reads are allowed except in the
// private folders (outside the grants), writes only in the grants, the
// network only when p allows it, and no process-info of other processes.
func profile(p Policy) string {
	q := func(s string) string { return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"` }
	var b strings.Builder
	b.WriteString("(version 1)\n(allow default)\n(deny file-write*)\n")
	rw := append(append([]string{}, p.RW...), p.Tmp)
	for _, d := range rw {
		if d != "" {
			fmt.Fprintf(&b, "(allow file-write* (subpath %s))\n", q(d))
		}
	}
	b.WriteString("(allow file-write* (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/tty\"))\n")
	for _, d := range p.Private {
		fmt.Fprintf(&b, "(deny file-read* (subpath %s))\n", q(d))
	}
	for _, d := range rw {
		if d != "" {
			fmt.Fprintf(&b, "(allow file-read* (subpath %s))\n", q(d))
		}
	}
	if !p.Network {
		b.WriteString("(deny network-outbound (remote ip))\n(deny network-bind (local ip))\n")
	}
	b.WriteString("(deny process-info* (target others))\n")
	return b.String()
}

// start runs cmd under sandbox-exec with p's profile; cmd.SysProcAttr is
// kept.
func start(cmd *exec.Cmd, p Policy) error {
	wrap(cmd, p)
	return cmd.Start()
}

func wrap(cmd *exec.Cmd, p Policy) {
	args := append([]string{sandboxExec, "-p", profile(p), cmd.Path}, cmd.Args[1:]...)
	cmd.Path, cmd.Args = sandboxExec, args
}

func execConfined(p Policy, name string, argv []string) error {
	path, err := exec.LookPath(name)
	if err != nil {
		return err
	}
	args := append([]string{sandboxExec, "-p", profile(p), path}, argv[1:]...)
	return fmt.Errorf("run %s: %w", path, syscall.Exec(sandboxExec, args, os.Environ()))
}
