package tool

// How each network program names where it connects: its options, its
// remotes, git's subcommands and the host in a word (shelldest.go reads
// the command line around them).

import (
	"net"
	"regexp"
	"slices"
	"strings"
)

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
