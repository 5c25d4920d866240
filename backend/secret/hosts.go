package secret

import (
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// A variable can name the hosts its value may be sent to (as browser-use
// scopes its sensitive data by domain): a request, an app server's
// headers, a browser page or a command's URL for any other host is refused
// before anything is sent. No hosts: any host (what every variable was
// before).

// maxHosts bounds a variable's host list.
const maxHosts = 32

// ParseHosts checks a variable's host list and returns it normalized:
// trimmed, lower case, no trailing dot, duplicates dropped, in the order
// given. Each entry is an exact host (api.github.com, 127.0.0.1, ::1) or a
// wildcard *.example.com, which matches example.com and every host under
// it. An error says which entry is wrong and what to write instead.
func ParseHosts(list []string) ([]string, error) {
	out := []string{}
	for _, raw := range list {
		h, err := parseHost(raw)
		if err != nil {
			return nil, err
		}
		if h != "" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	if len(out) > maxHosts {
		return nil, fault.Invalid("%d hosts is more than the %d a variable may name; use a wildcard such as *.example.com for many hosts of one domain", len(out), maxHosts)
	}
	return out, nil
}

// parseHost normalizes one entry of a host list ("" for a blank one).
func parseHost(raw string) (string, error) {
	h := strings.ToLower(strings.TrimSpace(raw))
	if h == "" {
		return "", nil
	}
	if strings.Contains(h, "://") || strings.ContainsAny(h, "/?#@") {
		hint := ""
		if u, err := url.Parse(h); err == nil && u.Hostname() != "" {
			hint = " (here " + u.Hostname() + ")"
		} else if !strings.Contains(h, "://") {
			if u, err := url.Parse("x://" + h); err == nil && u.Hostname() != "" {
				hint = " (here " + u.Hostname() + ")"
			}
		}
		return "", fault.Invalid("host %s is not a host name: write the host alone%s, without scheme, path or user", quoteSnippet(raw), hint)
	}
	if ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")); ip != nil {
		return ip.String(), nil
	}
	if _, port, err := net.SplitHostPort(h); err == nil && port != "" {
		return "", fault.Invalid("host %s names a port: write the host alone; a variable's hosts hold on every port", quoteSnippet(raw))
	}
	h = strings.TrimSuffix(h, ".")
	name, wild := strings.CutPrefix(h, "*.")
	if h == "*" {
		return "", fault.Invalid("host \"*\" would allow every host: leave the list empty for that")
	}
	if len(name) > 253 || !hostName.MatchString(name) {
		return "", fault.Invalid("host %s is not a host name: write one like api.github.com, or *.github.com for it and every host under it (letters, digits, - and _ between dots; a * only as the first label)", quoteSnippet(raw))
	}
	if wild && !strings.Contains(name, ".") {
		return "", fault.Invalid("host %s would allow every host under .%s: name a domain with at least two labels, such as *.example.com", quoteSnippet(raw), name)
	}
	if wild {
		return "*." + name, nil
	}
	return name, nil
}

// hostName is a DNS name: labels of letters, digits, - and _ (not at a
// label's ends for -), 1–63 bytes each.
var hostName = regexp.MustCompile(`^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$`)

// HostAllowed reports whether host (a URL's host, with or without port or
// IPv6 brackets) matches one of patterns (ParseHosts' form). No patterns:
// every host.
func HostAllowed(patterns []string, host string) bool {
	if len(patterns) == 0 {
		return true
	}
	h := normalHost(host)
	if h == "" {
		return false
	}
	for _, p := range patterns {
		if suffix, wild := strings.CutPrefix(p, "*."); wild {
			if h == suffix || strings.HasSuffix(h, "."+suffix) {
				return true
			}
		} else if h == p {
			return true
		}
	}
	return false
}

// normalHost is host without port, brackets and trailing dot, lower case;
// an IP address in its canonical form.
func normalHost(host string) string {
	h := strings.ToLower(strings.TrimSpace(host))
	if hh, _, err := net.SplitHostPort(h); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if ip := net.ParseIP(h); ip != nil {
		return ip.String()
	}
	return strings.TrimSuffix(h, ".")
}

// urlHosts finds the hosts of the URLs written in text (scheme://host…,
// any scheme), the user part left out, each once.
func urlHosts(text string) []string {
	var out []string
	for _, m := range urlAuthority.FindAllStringSubmatch(text, -1) {
		auth := m[1]
		if i := strings.LastIndexByte(auth, '@'); i >= 0 {
			auth = auth[i+1:]
		}
		h := normalHost(auth)
		if h == "" {
			if u, err := url.Parse("x://" + auth); err == nil {
				h = normalHost(u.Host)
			}
		}
		if h != "" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// urlAuthority matches scheme:// and the authority after it.
var urlAuthority = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://([^\s/?#'"\\<>()\x60;|&]+)`)

// URLHosts is the hosts of the URLs written in text (scheme://host…, any
// scheme): where a command sends what it holds.
func URLHosts(text string) []string { return urlHosts(text) }

// Hosts is the host list of the variable name (nil: any host).
func (v *Variables) Hosts(name string) []string {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return slices.Clone(v.hosts[name])
}

// CheckSend refuses the ${NAME} references of texts going to hosts when a
// variable they name may not be sent to one of them; hosts are URL hosts
// (a port is ignored). It is called before anything is sent, with the text
// as written (before Resolve). No hosts, or references to variables
// without a host list: nothing to refuse. Malformed references are left to
// Resolve.
func (v *Variables) CheckSend(texts []string, hosts ...string) error {
	if len(hosts) == 0 {
		return nil
	}
	v.mu.RLock()
	defer v.mu.RUnlock()
	for _, text := range texts {
		var refused error
		_, _ = Expand(text, func(name string) (string, bool) {
			allowed := v.hosts[name]
			for _, h := range hosts {
				if refused == nil && !HostAllowed(allowed, h) {
					refused = fault.Invalid("the variable %s may only be sent to %s, and this would send it to %s: nothing was sent. Use it only with those hosts, or add %s to its hosts in Settings → Variables",
						name, strings.Join(allowed, ", "), normalHost(h), normalHost(h))
				}
			}
			return "", true
		}, nil)
		if refused != nil {
			return refused
		}
	}
	return nil
}

// HostBound is the names of the variables referenced in texts (as written,
// ${NAME}) that name the hosts they may be sent to, each once, in the
// order first referenced.
func (v *Variables) HostBound(texts []string) []string {
	v.mu.RLock()
	defer v.mu.RUnlock()
	var out []string
	for _, text := range texts {
		_, _ = Expand(text, func(name string) (string, bool) {
			if len(v.hosts[name]) > 0 && !slices.Contains(out, name) {
				out = append(out, name)
			}
			return "", true
		}, nil)
	}
	return out
}
