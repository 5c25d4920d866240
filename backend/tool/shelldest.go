package tool

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/secret"
)

// A variable limited to hosts may only go, in a command, where the
// command's words say it goes: the URLs written in it, and the bare
// destinations of the network programs it runs (curl evil.example, nc host
// 80, ssh user@host, git clone host:repo). Where a network program's
// destination is not written — a $URL, a remote name, a config file, a
// proxy command — the command is refused while such a variable is in it.
// This reads the words; it cannot see what a script or ~/.curlrc does:
// the agent's network switch is what closes the network.

// commandReach is where a command line sends what it holds, as far as its
// words tell.
type commandReach struct {
	hosts   []string // destinations written in the words
	unknown []string // the programs whose destination the words do not tell
}

func (r *commandReach) host(h string) {
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if h != "" && !slices.Contains(r.hosts, h) {
		r.hosts = append(r.hosts, h)
	}
}

func (r *commandReach) notKnown(what string) {
	if !slices.Contains(r.unknown, what) {
		r.unknown = append(r.unknown, what)
	}
}

// commandDestinations reads where command (as run, variables filled in)
// sends what it holds.
func commandDestinations(command string) commandReach {
	var r commandReach
	r.line(command, 0)
	return r
}

func (r *commandReach) line(command string, depth int) {
	if depth > maxShellDepth {
		r.notKnown("a command nested too deeply to read")
		return
	}
	for _, words := range shellCommands(command) {
		r.simple(words, depth, false)
	}
}

// simple reads one simple command; viaXargs: its last arguments come from
// standard input.
func (r *commandReach) simple(words []string, depth int, viaXargs bool) {
	for len(words) > 0 && assignment.MatchString(words[0]) {
		name, value, _ := strings.Cut(words[0], "=")
		r.assignment(name, value)
		words = words[1:]
	}
	if len(words) == 0 {
		return
	}
	if strings.Contains(words[0], expansionMark) {
		r.notKnown("a command whose name is computed (" + printable(words[0]) + ")")
		return
	}
	prog := strings.TrimSuffix(strings.ToLower(path.Base(strings.ReplaceAll(words[0], `\`, "/"))), ".exe")
	args := words[1:]
	if w, ok := wrappers[prog]; ok {
		rest, ok := w.command(prog, args, r)
		if ok {
			r.simple(rest, depth, viaXargs || prog == "xargs" || prog == "parallel")
		}
		return
	}
	if t, ok := netTools[prog]; ok {
		if viaXargs {
			r.notKnown(prog + " given its arguments by xargs")
			return
		}
		t.read(prog, args, r)
		return
	}
	switch {
	case shells[prog]:
		code, ok := shellCode(args)
		if !ok || strings.Contains(code, expansionMark) || viaXargs {
			r.interpreter(prog, args)
			return
		}
		r.line(code, depth+1)
	case prog == "eval":
		code := strings.Join(args, " ")
		if strings.Contains(code, expansionMark) || viaXargs {
			r.notKnown("eval of a computed text")
			return
		}
		r.line(code, depth+1)
	case interpreters[prog] || strings.HasPrefix(prog, "python"):
		r.interpreter(prog, args)
	}
}

// interpreter reads a program that runs code: it sends to the URLs written
// in its arguments, if any; otherwise where it sends is not known.
func (r *commandReach) interpreter(prog string, args []string) {
	found := false
	for _, a := range args {
		for _, h := range secret.URLHosts(a) {
			r.host(h)
			found = true
		}
	}
	if !found {
		r.notKnown(prog + " (a program that runs code)")
	}
}

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// assignment reads NAME=value before a command, or in run_command's env:
// a proxy is a destination; what configures a network program from
// elsewhere makes its destination unknown.
func (r *commandReach) assignment(name, value string) {
	n := strings.ToLower(name)
	switch {
	case n == "no_proxy":
	case strings.HasSuffix(n, "_proxy"):
		if value == "" {
			return
		}
		if h, ok := wordHost(value, true); ok {
			r.host(h)
		} else {
			r.notKnown(name + " (a proxy that is not a host name)")
		}
	case strings.HasPrefix(n, "git_config") || strings.HasPrefix(n, "git_ssh") || slices.Contains([]string{"git_proxy_command", "rsync_rsh", "curl_home", "wgetrc", "curlopt"}, n):
		r.notKnown(name + " (it configures a network program)")
	}
}

// printable is a word for an error: the expansions written $….
func printable(w string) string { return strings.ReplaceAll(w, expansionMark, "$…") }

// shells are the programs that run sh code.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "ash": true, "mksh": true, "fish": true}

// interpreters are programs that run code, of which only the URLs written
// in their arguments tell where they send.
var interpreters = map[string]bool{
	"node": true, "nodejs": true, "perl": true, "ruby": true, "php": true, "deno": true, "bun": true,
	"lua": true, "rscript": true, "pwsh": true, "powershell": true, "osascript": true, "source": true, ".": true,
	"npx": true, "uv": true, "uvx": true, "pipx": true, "go": true, "java": true, "make": true,
}

// shellCode is the code of sh -c CODE (also -ec, -lc…).
func shellCode(args []string) (string, bool) {
	for i, a := range args {
		if a == "--" || !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+") {
			return "", false
		}
		if a == "-o" || a == "+o" {
			continue // its option name follows; read as a word of its own below
		}
		if !strings.HasPrefix(a, "--") && strings.Contains(a[1:], "c") {
			if i+1 < len(args) {
				return args[i+1], true
			}
			return "", false
		}
	}
	return "", false
}

// wrapper is a program that runs the command after its own options.
type wrapper struct {
	args       string   // short options that take a value
	long       []string // long options that take a value
	positional int      // its own arguments before the command (timeout's duration)
	opaque     []string // options that make the command unknown (env -S)
}

var wrappers = map[string]wrapper{
	"env":      {args: "uCS", long: []string{"--unset", "--chdir", "--split-string"}, opaque: []string{"-S", "--split-string"}},
	"sudo":     {args: "ugCDhprtTU", long: []string{"--user", "--group", "--chdir", "--host", "--prompt"}},
	"doas":     {args: "uC"},
	"nice":     {args: "n", long: []string{"--adjustment"}},
	"nohup":    {},
	"time":     {args: "fo", long: []string{"--format", "--output"}},
	"command":  {},
	"exec":     {args: "a"},
	"builtin":  {},
	"timeout":  {args: "sk", long: []string{"--signal", "--kill-after"}, positional: 1},
	"stdbuf":   {args: "ioe", long: []string{"--input", "--output", "--error"}},
	"setsid":   {},
	"ionice":   {args: "cnp", long: []string{"--class", "--classdata", "--pid"}},
	"chronic":  {},
	"unbuffer": {},
	"watch":    {args: "nd", long: []string{"--interval"}},
	"xargs":    {args: "adEeIiLlnPs", long: []string{"--arg-file", "--delimiter", "--eof", "--replace", "--max-lines", "--max-args", "--max-procs", "--max-chars"}},
	"parallel": {args: "jSa", long: []string{"--jobs", "--sshlogin", "--arg-file"}, opaque: []string{"-S", "--sshlogin"}},
	"busybox":  {},
	"strace":   {args: "eoopsu"},
}

// command returns the command the wrapper runs; false when there is none
// to read (or it is unknown, recorded in r).
func (w wrapper) command(prog string, args []string, r *commandReach) ([]string, bool) {
	skip := w.positional
	for i := 0; i < len(args); i++ {
		a := args[i]
		opt, value, hasValue, takes := readOption(a, w.args, w.long)
		switch {
		case a == "--":
			args = args[i+1:]
			i = -1
			if skip == 0 {
				return args, true
			}
			continue
		case opt != "":
			if slices.Contains(w.opaque, opt) {
				r.notKnown(prog + " " + opt)
				return nil, false
			}
			if takes && !hasValue {
				i++
			}
			_ = value
			continue
		case prog == "env" && assignment.MatchString(a):
			name, v, _ := strings.Cut(a, "=")
			r.assignment(name, v)
			continue
		case skip > 0:
			skip--
			continue
		}
		return args[i:], true
	}
	return nil, false
}

// readOption reads an option word: its name (-x, --name; "" when a is not
// an option), a value written in the same word, and whether the option
// takes a value (in the next word when hasValue is false). A bundle of
// short flags is read up to the first that takes a value.
func readOption(a, short string, long []string) (opt, value string, hasValue, takes bool) {
	if len(a) < 2 || a[0] != '-' || a == "--" {
		return "", "", false, false
	}
	if strings.HasPrefix(a, "--") {
		name, v, eq := strings.Cut(a, "=")
		return name, v, eq, eq || slices.Contains(long, name)
	}
	for k := 1; k < len(a); k++ {
		if strings.IndexByte(short, a[k]) >= 0 {
			v := a[k+1:]
			return "-" + a[k:k+1], v, v != "", true
		}
	}
	return a, "", false, false
}
