package httpapi

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agentfile"
	"github.com/rerun-build/rerun-desktop/backend/mcpapi"
	"github.com/rerun-build/rerun-desktop/backend/template"
)

// cookieName is per port: browsers share cookies across ports of one host, and
// two Rerun servers on one computer must not overwrite each other's token.
func cookieName(host string) string {
	_, port, _ := net.SplitHostPort(host)
	if port == "" {
		return "rerun_ui"
	}
	return "rerun_ui_" + port
}

// loopbackHost reports whether a Host header names this computer. Anything
// else is a DNS-rebinding attempt: a foreign name resolving to 127.0.0.1.
func loopbackHost(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.IsLoopback()
}

func (s *Server) hostAllowed(host string) bool {
	if loopbackHost(host) {
		return true
	}
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	return slices.Contains(s.cfg.ExtraHosts, strings.ToLower(h))
}

// originAllowed: a browser sends Origin on cross-origin requests and on
// same-origin non-GET ones; only our own page (or the Wails window) may call.
func (s *Server) originAllowed(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	if slices.Contains(s.cfg.ExtraOrigins, o) {
		return true
	}
	return o == "http://"+r.Host
}

func (s *Server) tokenOK(got string) bool {
	return s.cfg.Token != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) == 1
}

func (s *Server) requestToken(r *http.Request) string {
	if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer ") {
		return strings.TrimPrefix(a, "Bearer ")
	}
	// A WebSocket cannot set headers, and the desktop window's page opens
	// its screen socket on the local server, where no cookie of it goes:
	// the token comes in the address (screenToken).
	if t := r.URL.Query().Get("token"); t != "" && isWebSocket(r) {
		return t
	}
	if c, err := r.Cookie(cookieName(r.Host)); err == nil {
		return c.Value
	}
	return ""
}

func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hostAllowed(r.Host) {
			s.log.Warn("refused foreign Host", "host", r.Host, "path", logPath(r))
			writeError(w, http.StatusForbidden, "this server only answers to localhost addresses")
			return
		}
		// Webhook triggers are called by services: no UI token, no Origin
		// check; the token in the path is the credential, and each trigger
		// limits its own body (1 MiB) and rate. The same goes for the
		// browser coming back from an app's sign-in: its state is the
		// credential.
		if isHook(r) || isOAuthCallback(r) {
			next.ServeHTTP(w, r)
			return
		}
		if !s.originAllowed(r) {
			s.log.Warn("refused foreign Origin", "origin", r.Header.Get("Origin"), "path", r.URL.Path)
			writeError(w, http.StatusForbidden, "requests from other web pages are not allowed")
			return
		}
		// Opening the URL printed by `rerun serve` logs the browser in: the
		// token moves into an HttpOnly cookie and out of the address bar.
		if t := r.URL.Query().Get("token"); t != "" && r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/api/") {
			if !s.tokenOK(t) {
				// An old link (from an earlier start): drop the token and let
				// the page explain where the current link is.
				http.Redirect(w, r, r.URL.Path, http.StatusSeeOther)
				return
			}
			s.signIn(w, r)
			return
		}
		// An address this server handed to another program (Pop out opens
		// the default browser) carries a one-time code instead (login.go).
		if c := r.URL.Query().Get("login"); c != "" && r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/api/") {
			if s.logins.use(c, time.Now()) {
				s.signIn(w, r)
				return
			}
			// Used or too old: the page says where a current link is.
			s.log.Warn("refused a used or expired login code", "path", r.URL.Path)
			http.Redirect(w, r, r.URL.Path, http.StatusSeeOther)
			return
		}
		// The MCP endpoint authenticates with workspace API keys instead.
		if (strings.HasPrefix(r.URL.Path, "/api/") || r.URL.Path == "/api") && !(s.cfg.MCP != nil && r.URL.Path == mcpapi.Path) {
			if !s.tokenOK(s.requestToken(r)) {
				writeError(w, http.StatusUnauthorized, "missing or wrong UI token; open the URL that `rerun serve` printed (it carries the token)")
				return
			}
		}
		limit := bodyLimit(r)
		if r.ContentLength > limit {
			writeError(w, http.StatusRequestEntityTooLarge, tooLarge(r))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next.ServeHTTP(w, r)
	})
}

// signIn gives the browser the UI token in an HttpOnly cookie and sends it
// to the same page without the token or code in its address (the fragment
// stays: the browser keeps it across the redirect).
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{
		Name: cookieName(r.Host), Value: s.cfg.Token, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode,
	})
	http.Redirect(w, r, r.URL.Path, http.StatusSeeOther)
}

// isSkillImport reports whether r is POST /api/workspaces/{ws}/agents/{id}/skills/import,
// the one route whose body is an archive rather than JSON.
func isSkillImport(r *http.Request) bool {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	return r.Method == http.MethodPost && len(parts) == 7 && parts[0] == "api" && parts[1] == "workspaces" &&
		parts[3] == "agents" && parts[5] == "skills" && parts[6] == "import"
}

// isTemplateImport reports whether r is POST /api/workspaces/{ws}/templates/import,
// whose body is a .rerun-template file.
func isTemplateImport(r *http.Request) bool {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	return r.Method == http.MethodPost && len(parts) == 5 && parts[0] == "api" && parts[1] == "workspaces" &&
		parts[3] == "templates" && parts[4] == "import"
}

// isAgentImport reports whether r is POST /api/workspaces/{ws}/agents/import,
// whose body is a .rerun-agent file.
func isAgentImport(r *http.Request) bool {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	return r.Method == http.MethodPost && len(parts) == 5 && parts[0] == "api" && parts[1] == "workspaces" &&
		parts[3] == "agents" && parts[4] == "import"
}

// bodyLimit is MaxBodyBytes, or MaxImportBytes for a skill import, or
// template.MaxPackageBytes for a template import, agentfile.MaxBytes for an
// agent import.
func bodyLimit(r *http.Request) int64 {
	switch {
	case isAgentImport(r):
		return agentfile.MaxBytes
	case isSkillImport(r):
		return MaxImportBytes
	case isTemplateImport(r):
		return template.MaxPackageBytes
	}
	return MaxBodyBytes
}

func tooLarge(r *http.Request) string {
	switch {
	case isAgentImport(r):
		return fmt.Sprintf("the .rerun-agent file is larger than %d MiB, the most an agent file holds", agentfile.MaxBytes>>20)
	case isSkillImport(r):
		return "the .zip is larger than 12 MiB; a skill holds at most 10 MiB, so leave large files out"
	case isTemplateImport(r):
		return fmt.Sprintf("the .rerun-template file is larger than %d MiB, the most a template package holds", template.MaxPackageBytes>>20)
	}
	return "request body is larger than 1 MiB; send less"
}

func isTooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}
