package tool

import (
	"net"
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

// destKind is how a network program's arguments name where it connects.
type destKind int

const (
	destEvery  destKind = iota // each argument is a URL, the scheme optional (curl, wget)
	destFirst                  // the first argument is [user@]host (ssh, nc, telnet, ftp)
	destHTTPie                 // [METHOD] URL ITEM… (httpie, xh)
	destRemote                 // host:path arguments; none: a local copy (scp, rsync)
	destGit                    // git SUBCOMMAND … REPOSITORY
)

// netTool is a network program's options, as far as they matter here.
type netTool struct {
	kind   destKind
	args   string   // short options that take a value
	long   []string // long options that take a value
	dest   []string // options whose value is a destination too (a proxy, a jump host)
	opaque []string // options that make the destination unknown (a config file, a DNS server, a proxy command)
}

var netTools = map[string]netTool{
	"curl": {kind: destEvery, args: "AbcCdDeEFHhKmoPQrtTuUwxXyYz",
		long: []string{"--url", "--proxy", "--preproxy", "--header", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii", "--json", "--form", "--form-string",
			"--output", "--output-dir", "--user", "--request", "--user-agent", "--referer", "--cookie", "--cookie-jar", "--upload-file", "--write-out", "--max-time",
			"--connect-timeout", "--retry", "--retry-delay", "--retry-max-time", "--cacert", "--capath", "--cert", "--cert-type", "--key", "--key-type", "--oauth2-bearer", "--proxy-user",
			"--proxy-header", "--range", "--limit-rate", "--dump-header", "--interface", "--local-port", "--max-filesize", "--max-redirs", "--config", "--resolve", "--connect-to",
			"--dns-servers", "--doh-url", "--unix-socket", "--abstract-unix-socket", "--variable", "--aws-sigv4", "--continue-at", "--time-cond", "--trace", "--trace-ascii", "--stderr", "--quote", "--socks5", "--socks4", "--socks4a", "--socks5-hostname"},
		dest:   []string{"-x", "--proxy", "--preproxy", "--url", "--socks5", "--socks4", "--socks4a", "--socks5-hostname"},
		opaque: []string{"-K", "--config", "--resolve", "--connect-to", "--dns-servers", "--doh-url", "--unix-socket", "--abstract-unix-socket", "--variable"}},
	"wget": {kind: destEvery, args: "OoaPtTwQUlARDIXeiB",
		long: []string{"--output-document", "--output-file", "--append-output", "--directory-prefix", "--tries", "--timeout", "--wait", "--quota", "--user-agent", "--level",
			"--accept", "--reject", "--domains", "--include-directories", "--exclude-directories", "--header", "--user", "--password", "--http-user", "--http-password",
			"--post-data", "--post-file", "--body-data", "--body-file", "--method", "--referer", "--load-cookies", "--save-cookies", "--ca-certificate", "--certificate",
			"--private-key", "--limit-rate", "--execute", "--input-file", "--base", "--config"},
		opaque: []string{"-e", "--execute", "-i", "--input-file", "-B", "--base", "--config"}},
	"http":   httpie,
	"https":  httpie,
	"xh":     httpie,
	"xhs":    httpie,
	"nc":     netcat,
	"ncat":   netcat,
	"netcat": netcat,
	"telnet": {kind: destFirst, args: "belnX"},
	"ftp":    {kind: destFirst, args: "Pos"},
	"tftp":   {kind: destFirst, args: "m"},
	"lftp":   {kind: destFirst, args: "upecf", opaque: []string{"-c", "-f", "-e"}},
	"ssh": {kind: destFirst, args: "BbcDEeFIiJLlmOopQRSWw",
		dest: []string{"-J", "-W"}, opaque: []string{"-F"}},
	"sftp": {kind: destFirst, args: "BbcDFiJloPRSs", dest: []string{"-J"}, opaque: []string{"-F", "-S", "-D"}},
	"scp":  {kind: destRemote, args: "cDFiJloPSX", dest: []string{"-J"}, opaque: []string{"-F", "-S"}},
	"rsync": {kind: destRemote, args: "efTBM",
		long: []string{"--rsh", "--exclude", "--include", "--filter", "--files-from", "--exclude-from", "--include-from", "--port", "--password-file", "--log-file",
			"--temp-dir", "--compare-dest", "--copy-dest", "--link-dest", "--partial-dir", "--chmod", "--chown", "--timeout", "--contimeout", "--bwlimit", "--max-size",
			"--min-size", "--suffix", "--backup-dir", "--out-format", "--address", "--sockopts", "--rsync-path", "--usermap", "--groupmap"},
		opaque: []string{"--files-from"}},
	"git": {kind: destGit, args: "Cc", long: []string{"--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path"}, opaque: []string{"--config-env", "--exec-path"}},
}

var httpie = netTool{kind: destHTTPie, args: "aAopsv",
	long: []string{"--auth", "--auth-type", "--output", "--session", "--session-read-only", "--proxy", "--cert", "--cert-key", "--verify", "--timeout",
		"--print", "--pretty", "--style", "--format-options", "--max-redirects", "--boundary", "--ssl", "--ciphers", "--default-scheme", "--max-headers", "--response-charset", "--response-mime"}}

var netcat = netTool{kind: destFirst, args: "eGgIiMmOPpqsTVWwXxc",
	long: []string{"--proxy", "--proxy-type", "--proxy-auth", "--exec", "--sh-exec", "--lua-exec", "--source", "--source-port", "--wait", "--idle-timeout", "--output", "--hex-dump"},
	dest: []string{"-x", "--proxy"}}

// read reads the network program prog's arguments into r.
func (t netTool) read(prog string, args []string, r *commandReach) {
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		opt, value, hasValue, takes := readOption(a, t.args, t.long)
		if opt == "" && t.kind == destGit {
			positional = args[i:] // the subcommand and its own options
			break
		}
		if opt == "" {
			positional = append(positional, a)
			continue
		}
		if takes && !hasValue {
			if i+1 < len(args) {
				value = args[i+1]
			}
			i++
		}
		switch {
		case slices.Contains(t.opaque, opt):
			r.notKnown(prog + " " + opt)
		case slices.Contains(t.dest, opt):
			for _, d := range strings.Split(value, ",") {
				r.destination(prog, d, true)
			}
		case opt == "-o" && (prog == "ssh" || prog == "scp" || prog == "sftp"), opt == "-e" && prog == "rsync", opt == "--rsh":
			if v := strings.ToLower(value); strings.Contains(v, "proxy") || strings.Contains(v, "hostname") || strings.Contains(v, "-j") || strings.Contains(v, "-f") || strings.Contains(v, expansionMark) {
				r.notKnown(prog + " " + opt + " " + printable(value))
			}
		case prog == "git" && opt == "-c":
			r.gitConfig(value)
		case prog == "http" || prog == "https" || prog == "xh" || prog == "xhs":
			if opt == "--proxy" {
				_, u, _ := strings.Cut(value, ":")
				r.destination(prog, u, true)
			}
		}
	}
	switch t.kind {
	case destEvery:
		if len(positional) == 0 && !slices.ContainsFunc(args, func(a string) bool { return a == "--url" || strings.HasPrefix(a, "--url=") }) {
			r.notKnown(prog + " with no URL")
		}
		for _, p := range positional {
			r.destination(prog, p, true)
		}
	case destFirst:
		if len(positional) == 0 {
			r.notKnown(prog + " with no host")
			return
		}
		r.destination(prog, positional[0], true)
	case destHTTPie:
		if len(positional) > 0 && isMethod(positional[0]) {
			positional = positional[1:]
		}
		if len(positional) == 0 {
			r.notKnown(prog + " with no URL")
			return
		}
		u := positional[0]
		if strings.HasPrefix(u, ":") { // :3000/path is localhost
			u = "localhost" + u
		}
		r.destination(prog, u, true)
	case destRemote:
		for _, p := range positional {
			r.remote(prog, p, false)
		}
	case destGit:
		r.git(positional)
	}
}

func isMethod(w string) bool {
	return w != "" && strings.Trim(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == ""
}

// destination records the host of the destination word w (a URL, or where
// bare a [user@]host[:port][/…]), or that it is unknown.
func (r *commandReach) destination(prog, w string, bare bool) {
	if h, ok := wordHost(w, bare); ok {
		r.host(h)
		return
	}
	r.notKnown(prog + " " + printable(w))
}

// remote reads an scp/rsync/git argument: a URL, [user@]host:path (also
// host::module), or a local path. required: a local path (or a remote
// name) leaves the destination unknown.
func (r *commandReach) remote(prog, w string, required bool) {
	if strings.Contains(w, "://") {
		if strings.HasPrefix(strings.ToLower(w), "file://") {
			return
		}
		r.destination(prog, w, false)
		return
	}
	colon := strings.IndexByte(w, ':')
	if strings.HasPrefix(w, "[") {
		if end := strings.Index(w, "]:"); end > 0 {
			colon = end + 1
		}
	}
	before := w
	if colon >= 0 {
		before = w[:colon]
	}
	switch {
	case strings.Contains(before, expansionMark):
		r.notKnown(prog + " " + printable(w))
	case colon > 0 && !strings.Contains(before, "/"):
		if at := strings.LastIndexByte(before, '@'); at >= 0 {
			before = before[at+1:]
		}
		r.destination(prog, before, true)
	case required && !strings.ContainsAny(w, "/.") && !strings.HasPrefix(w, "~"):
		r.notKnown(prog + " to the remote " + printable(w) + " (its URL is not written)")
	}
}

// gitNetwork are git's subcommands that connect to a repository named by
// their first argument.
var gitNetwork = map[string]bool{"clone": true, "fetch": true, "pull": true, "push": true, "ls-remote": true, "fetch-pack": true, "send-pack": true, "archive": false}

// gitArgs are the options of git's network subcommands that take a value.
var gitArgs = []string{"-b", "-o", "-c", "-j", "-u", "--branch", "--origin", "--config", "--depth", "--reference", "--reference-if-able", "--template", "--separate-git-dir",
	"--jobs", "--filter", "--push-option", "--server-option", "--shallow-since", "--shallow-exclude", "--deepen", "--upload-pack", "--receive-pack", "--exec", "--negotiation-tip", "--refmap", "--repo", "--bundle-uri"}

// git reads git's arguments after its global options.
func (r *commandReach) git(args []string) {
	if len(args) == 0 {
		return
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "submodule", "remote":
		for _, a := range rest {
			if strings.Contains(a, "://") || strings.Contains(a, ":") && !strings.HasPrefix(a, "-") {
				r.remote("git "+sub, a, false)
			}
		}
		if len(rest) > 0 && slices.Contains([]string{"update", "sync", "show", "prune", "foreach"}, rest[0]) {
			r.notKnown("git " + sub + " " + rest[0] + " (its URLs are not written)")
		}
		return
	case "send-email":
		r.notKnown("git send-email")
		return
	}
	if !gitNetwork[sub] {
		return
	}
	var repo string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			if i+1 < len(rest) && repo == "" {
				repo = rest[i+1]
			}
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			if repo == "" {
				repo = a
			}
			continue
		}
		name, value, eq := strings.Cut(a, "=")
		takes := slices.Contains(gitArgs, name) && !(name == "-u" && sub != "clone")
		if takes && !eq && i+1 < len(rest) {
			value = rest[i+1]
			i++
		}
		switch name {
		case "--upload-pack", "--receive-pack", "--exec":
			r.notKnown("git " + sub + " " + name)
		case "-u":
			if sub == "clone" {
				r.notKnown("git clone -u")
			}
		case "-c", "--config":
			r.gitConfig(value)
		case "--repo":
			repo = value
		}
	}
	if repo == "" {
		r.notKnown("git " + sub + " with no repository URL")
		return
	}
	r.remote("git "+sub, repo, true)
}

// gitConfig reads git -c key=value: settings that send elsewhere or run a
// program make the destination unknown.
func (r *commandReach) gitConfig(kv string) {
	key, _, _ := strings.Cut(strings.ToLower(kv), "=")
	for _, s := range []string{"proxy", "insteadof", "sshcommand", "helper", "url", "askpass", "uploadpack", "receivepack", "include", expansionMark} {
		if strings.Contains(key, s) {
			r.notKnown("git -c " + printable(key))
			return
		}
	}
}

// wordHost is the host a destination word names: a URL (scheme://[user@]
// host[:port][/…]) or, where bare, [user@]host[:port][/…]. False when the
// host, or what comes before it, depends on an expansion, or is not a host
// name (a curl glob {a,b}, an empty host).
func wordHost(w string, bare bool) (string, bool) {
	start := 0
	if i := strings.Index(w, "://"); i >= 0 {
		start = i + 3
	} else if !bare {
		return "", false
	}
	end := len(w)
	if e := strings.IndexAny(w[start:], "/?#"); e >= 0 {
		end = start + e
	}
	if strings.Contains(w[:end], expansionMark) {
		return "", false
	}
	rest := w[start:end]
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		rest = rest[at+1:]
	}
	h := rest
	if hh, _, err := net.SplitHostPort(rest); err == nil {
		h = hh
	} else if strings.Count(rest, ":") == 1 {
		h, _, _ = strings.Cut(rest, ":") // host:path, host: (ftp, sftp)
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if ip := net.ParseIP(h); ip != nil {
		return ip.String(), true
	}
	if h == "" || !hostChars.MatchString(h) || strings.Trim(h, "0123456789") == "" {
		return "", false
	}
	return strings.ToLower(strings.TrimSuffix(h, ".")), true
}

var hostChars = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
