package browser

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/go-rod/rod/lib/proto"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// forbidden is the set of addresses no page may load (Config.Forbidden).
type forbidden []hostPort

type hostPort struct {
	host     string // lower case, no brackets
	port     string
	loopback bool // forbid every loopback name of the port
}

func parseForbidden(list []string) (forbidden, error) {
	var f forbidden
	for _, hp := range list {
		host, port, err := net.SplitHostPort(strings.TrimSpace(hp))
		if err != nil || host == "" || port == "" {
			return nil, fmt.Errorf("browser: forbidden address %q is not host:port", hp)
		}
		host = strings.ToLower(host)
		f = append(f, hostPort{host: host, port: port, loopback: loopbackHost(host)})
	}
	return f, nil
}

// loopbackHost reports whether host names this computer: localhost and its
// subdomains (Chromium resolves *.localhost to loopback itself), loopback
// addresses, and the unspecified address (0.0.0.0 reaches local listeners).
func loopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}

// blocks reports whether u points at a forbidden address.
func (f forbidden) blocks(u *url.URL) bool {
	if u == nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "ws" && u.Scheme != "wss") {
		return false
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" || u.Scheme == "wss" {
			port = "443"
		}
	}
	for _, e := range f {
		if e.port == port && (host == e.host || e.loopback && loopbackHost(host)) {
			return true
		}
	}
	return false
}

// patterns are the Fetch patterns that pause every request that may go to a
// forbidden address (any host on a forbidden port); blocks then decides.
// Everything else is never paused, so browsing pays nothing for the guard.
func (f forbidden) patterns() []*proto.FetchRequestPattern {
	var ports []string
	for _, e := range f {
		if !slices.Contains(ports, e.port) {
			ports = append(ports, e.port)
		}
	}
	var out []*proto.FetchRequestPattern
	for _, p := range ports {
		switch p {
		case "80":
			out = append(out, &proto.FetchRequestPattern{URLPattern: "http://*"}, &proto.FetchRequestPattern{URLPattern: "ws://*"})
		case "443":
			out = append(out, &proto.FetchRequestPattern{URLPattern: "https://*"}, &proto.FetchRequestPattern{URLPattern: "wss://*"})
		}
		out = append(out, &proto.FetchRequestPattern{URLPattern: "*://*:" + p + "/*"})
	}
	return out
}

// checkURL validates an address the model asked to open and returns it in
// full: http and https only (a bare "example.com/x" gets https://), plus
// about:blank; never a forbidden address.
func (f forbidden) checkURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", fault.Invalid("url is empty; give an address like https://example.com")
	}
	if strings.EqualFold(raw, "about:blank") {
		return "about:blank", nil
	}
	if !strings.Contains(raw, "://") && !strings.Contains(raw, ":") || hostWithPort(raw) {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fault.Invalid("url %q is not a valid address; give one like https://example.com/page", raw)
	}
	switch scheme := strings.ToLower(u.Scheme); scheme {
	case "http", "https":
	case "file":
		return "", fault.Invalid("refused: file:// addresses would show this computer's files to the web; read files with the file tools instead")
	case "about", "chrome", "chrome-extension", "chrome-untrusted", "devtools", "edge", "brave", "view-source", "chrome-search":
		return "", fault.Invalid("refused: %s: pages belong to the browser itself; open an http:// or https:// address", scheme)
	case "javascript":
		return "", fault.Invalid("refused: javascript: addresses run code instead of opening a page; open an http:// or https:// address")
	default:
		return "", fault.Invalid("refused: %s: addresses cannot be opened; open an http:// or https:// address", scheme)
	}
	if u.Host == "" || u.Hostname() == "" {
		return "", fault.Invalid("url %q has no host; give an address like https://example.com/page", raw)
	}
	if f.blocks(u) {
		return "", refusedErr(u.String())
	}
	return u.String(), nil
}

// hostWithPort reports whether s looks like "host:port/…" typed without a
// scheme (url.Parse would take the host for a scheme).
func hostWithPort(s string) bool {
	before, after, ok := strings.Cut(s, ":")
	if !ok || strings.Contains(before, "/") || before == "" {
		return false
	}
	port, _, _ := strings.Cut(after, "/")
	if port == "" {
		return false
	}
	for _, c := range port {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func refusedErr(u string) error {
	return fault.Invalid("refused: %s is the Rerun app's own local server, which its browsers never open; browse other sites", cutURL(u, 200))
}

// cutURL shortens a URL for a message.
func cutURL(u string, n int) string {
	if len(u) <= n {
		return u
	}
	return u[:n] + "…"
}
