// Package sandbox owns the confinement of the processes agents start: shell
// commands and the stdio MCP servers of their apps. A Policy names what a
// process may read and write (its agent's folder, the shared folder, a
// private temp folder, the system paths programs need) and whether it may
// reach the network; Start starts an *exec.Cmd confined to it, and Command
// builds one that confines itself through a re-exec of this binary (Main).
//
// On Linux the confinement is Landlock; on macOS a sandbox-exec profile;
// on Windows a job object and a restricted token, which do not confine
// files (Available says false there). Where Available is false callers
// must not run an agent's command without a person's approval.
package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Policy is what a confined process may reach.
type Policy struct {
	RW []string `json:"rw,omitempty"` // folders (or files) read, written and executed from
	RO []string `json:"ro,omitempty"` // folders (or files) read and executed from
	// Tmp is the process's private temp folder (read and write); the
	// caller sets TMPDIR to it.
	Tmp string `json:"tmp,omitempty"`
	// Network allows TCP connect and bind; false denies both where the
	// platform can (Landlock ABI 4+, sandbox-exec).
	Network bool `json:"network"`
	// Private are paths never granted read-only through System, even
	// when a system path would contain them (the data directory).
	Private []string `json:"private,omitempty"`
}

// ErrUnavailable is returned by Start and Command where no confinement can
// be applied; Available says why.
var ErrUnavailable = errors.New("commands are not sandboxed on this computer")

// envOff switches the sandbox off (RERUN_SANDBOX=off): every agent command
// then asks the person first, as on a computer without one.
const envOff = "RERUN_SANDBOX"

// Available reports whether processes can be confined here, and if not,
// why, in words for the person.
func Available() (bool, string) {
	if v := os.Getenv(envOff); v == "off" || v == "0" || v == "false" {
		return false, "the sandbox is switched off (RERUN_SANDBOX=" + v + ")"
	}
	return available()
}

// Start starts cmd confined to p. cmd.SysProcAttr, if set, is kept as is.
// Without confinement available it starts nothing and returns an error
// wrapping ErrUnavailable.
func Start(cmd *exec.Cmd, p Policy) error {
	if ok, why := Available(); !ok {
		return fmt.Errorf("%w: %s", ErrUnavailable, why)
	}
	p = p.clean()
	if err := p.check(); err != nil {
		return err
	}
	return start(cmd, p)
}

// execFlag is the hidden first argument with which this binary, re-executed
// by Command, confines itself and runs the real program (Main).
const execFlag = "-rerun-sandbox-exec"

// Command is exec.Command(name, args...) confined to p by a re-exec of this
// binary, which applies the policy to itself and then executes name: for
// long-lived processes whose start the caller does not own (stdio MCP
// servers). The binary must call Main first thing in main (and TestMain).
func Command(p Policy, name string, args ...string) (*exec.Cmd, error) {
	if ok, why := Available(); !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, why)
	}
	p = p.clean()
	if err := p.check(); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: find this program to re-run it confined: %w", err)
	}
	pol, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	return exec.Command(self, append([]string{execFlag, string(pol), name}, args...)...), nil
}

// Main runs the re-exec of Command when this process is one, and never
// returns then; otherwise it returns at once. Call it first in main and in
// the TestMain of packages that start confined commands.
func Main() {
	if len(os.Args) < 4 || os.Args[1] != execFlag {
		return
	}
	var p Policy
	if err := json.Unmarshal([]byte(os.Args[2]), &p); err != nil {
		fmt.Fprintf(os.Stderr, "rerun sandbox: bad policy: %v\n", err)
		os.Exit(126)
	}
	err := execConfined(p, os.Args[3], os.Args[3:])
	fmt.Fprintf(os.Stderr, "rerun sandbox: %v\n", err)
	os.Exit(126)
}

// clean makes every path absolute and clean and drops empty ones.
func (p Policy) clean() Policy {
	abs := func(list []string) []string {
		var out []string
		for _, s := range list {
			if s == "" {
				continue
			}
			if a, err := filepath.Abs(s); err == nil {
				s = a
			}
			out = append(out, filepath.Clean(s))
		}
		return out
	}
	p.RW, p.RO, p.Private = abs(p.RW), abs(p.RO), abs(p.Private)
	if p.Tmp != "" {
		p.Tmp = abs([]string{p.Tmp})[0]
	}
	return p
}

// check refuses a policy that grants the root folder or a folder that
// holds a private path.
func (p Policy) check() error {
	for _, g := range slices.Concat(p.RW, p.RO, []string{p.Tmp}) {
		if g == "" {
			continue
		}
		if g == string(filepath.Separator) || filepath.Dir(g) == g {
			return fmt.Errorf("sandbox: policy grants the whole disk (%s); grant folders", g)
		}
		for _, priv := range p.Private {
			if within(priv, g) && !slices.Contains(p.RW, priv) {
				return fmt.Errorf("sandbox: policy grants %s, which holds the private %s; grant a folder inside it", g, priv)
			}
		}
	}
	return nil
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Agent is the policy of a process an agent starts: read and write in own
// (its folder), shared and tmp, and extra (folders an app's configuration
// names); read-only in the system paths programs need (System); nothing
// else of dataDir.
func Agent(dataDir, own, shared, tmp string, extra []string, network bool) Policy {
	private := []string{dataDir}
	return Policy{
		RW:      slices.Concat([]string{own, shared}, extra),
		RO:      System(private...),
		Tmp:     tmp,
		Network: network,
		Private: private,
	}
}

// System is the read-only paths programs need to run here (system folders
// and the install folders of the programs on PATH), less any that is or
// holds one of private.
func System(private ...string) []string {
	var out []string
	add := func(p string) {
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		p = filepath.Clean(p)
		if filepath.Dir(p) == p {
			return
		}
		for _, priv := range private {
			if priv != "" && (within(priv, p) || within(p, priv)) {
				return
			}
		}
		if holdsHome(p) {
			return
		}
		if _, err := os.Stat(p); err != nil || slices.Contains(out, p) {
			return
		}
		out = append(out, p)
	}
	for _, p := range systemPaths {
		add(p)
	}
	// Programs on PATH outside the system folders (nvm's node, pyenv's
	// python, Homebrew's git): their install folder. Under the home
	// folder that is its first folder below home (~/.pyenv, ~/.nvm), else
	// bin's parent; when that would hold a private path, the PATH folder.
	home, _ := os.UserHomeDir()
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if !filepath.IsAbs(dir) {
			continue
		}
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
		if covered(out, dir) {
			continue
		}
		install := dir
		if rel, err := filepath.Rel(home, dir); home != "" && err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			install = filepath.Join(home, strings.Split(rel, string(filepath.Separator))[0])
		} else if filepath.Base(dir) == "bin" {
			install = filepath.Dir(dir)
		}
		n := len(out)
		add(install)
		if len(out) == n {
			add(dir)
		}
	}
	return out
}

// holdsHome reports whether dir is the user's home folder or holds it: a
// grant never spans the home folder (~/.ssh, ~/.aws).
func holdsHome(dir string) bool {
	home, err := os.UserHomeDir()
	return err == nil && home != "" && within(home, dir)
}

func covered(grants []string, p string) bool {
	for _, g := range grants {
		if within(p, g) {
			return true
		}
	}
	return false
}
