package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
)

// ListenProfiles listens on addr for Profiles; addr must be a loopback
// address with a port (127.0.0.1:6060), as profiles say what the program is
// doing and are nobody else's business.
func ListenProfiles(addr string) (net.Listener, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().IsLoopback() {
		return nil, fmt.Errorf("--pprof %q: give a loopback address and port, such as 127.0.0.1:6060", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof: %w", err)
	}
	return ln, nil
}

// Profiles is net/http/pprof under /debug/pprof/, for a developer's `go tool
// pprof http://127.0.0.1:6060/debug/pprof/profile`. It answers only requests
// that name this computer (no DNS rebinding) and that no web page sent (no
// Origin header).
func Profiles() http.Handler {
	m := http.NewServeMux()
	m.HandleFunc("/debug/pprof/", pprof.Index)
	m.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	m.HandleFunc("/debug/pprof/profile", pprof.Profile)
	m.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	m.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) || r.Header.Get("Origin") != "" {
			http.Error(w, "profiles answer only tools on this computer", http.StatusForbidden)
			return
		}
		m.ServeHTTP(w, r)
	})
}
