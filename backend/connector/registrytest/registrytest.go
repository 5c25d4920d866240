// Package registrytest is a fake MCP Registry: the documented read API
// (GET /v0.1/servers with search, cursor and limit, and GET
// /v0.1/servers/{name}/versions/latest) served by httptest, paginated the
// way the official registry is, so tests search and install through the
// calls a real registry answers.
package registrytest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Registry is a fake registry at URL.
type Registry struct {
	*httptest.Server

	mu      sync.Mutex
	servers []map[string]any // server.json objects, in list order
	down    bool
	lists   int
	cursors int // list requests that carried a cursor
}

// New serves servers (server.json objects) until the test ends.
func New(t testing.TB, servers ...map[string]any) *Registry {
	r := &Registry{servers: servers}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

// NPM is the server.json of a server run from an npm package.
func NPM(name, description, pkg, version string) map[string]any {
	return map[string]any{
		"name": name, "description": description, "version": "1.0.0",
		"packages": []any{map[string]any{"registryType": "npm", "identifier": pkg, "version": version, "transport": map[string]any{"type": "stdio"}}},
	}
}

// Add lists one more server.
func (r *Registry) Add(server map[string]any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.servers = append(r.servers, server)
}

// SetDown makes every request fail with 503 (true) or be answered again.
func (r *Registry) SetDown(down bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = down
}

// Lists is how many list requests were answered, and how many of them
// asked for a next page.
func (r *Registry) Lists() (lists, withCursor int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lists, r.cursors
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		return
	}
	path := req.URL.EscapedPath()
	switch {
	case req.Method != http.MethodGet:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	case path == "/v0.1/servers":
		r.list(w, req.URL.Query())
	case strings.HasPrefix(path, "/v0.1/servers/") && strings.HasSuffix(path, "/versions/latest"):
		name, err := url.PathUnescape(strings.TrimSuffix(strings.TrimPrefix(path, "/v0.1/servers/"), "/versions/latest"))
		if err != nil {
			http.Error(w, "bad name", http.StatusBadRequest)
			return
		}
		for _, s := range r.servers {
			if s["name"] == name {
				writeJSON(w, entry(s))
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"title":"Not Found","status":404,"detail":"Server not found"}`))
	default:
		http.NotFound(w, req)
	}
}

// list answers a page: servers whose name contains search, after the
// cursor (the last name of the page before), at most limit (default 30,
// at most 100).
func (r *Registry) list(w http.ResponseWriter, q url.Values) {
	r.lists++
	limit := 30
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			http.Error(w, `{"detail":"limit must be 1 to 100"}`, http.StatusUnprocessableEntity)
			return
		}
		limit = n
	}
	search := strings.ToLower(q.Get("search"))
	cursor := q.Get("cursor")
	if cursor != "" {
		r.cursors++
	}
	page := []any{}
	next := ""
	started := cursor == ""
	for _, s := range r.servers {
		name, _ := s["name"].(string)
		if !started {
			started = name == cursor
			continue
		}
		if search != "" && !strings.Contains(strings.ToLower(name), search) {
			continue
		}
		if len(page) == limit {
			next, _ = page[len(page)-1].(map[string]any)["server"].(map[string]any)["name"].(string)
			break
		}
		page = append(page, entry(s))
	}
	meta := map[string]any{"count": len(page)}
	if next != "" {
		meta["nextCursor"] = next
	}
	writeJSON(w, map[string]any{"servers": page, "metadata": meta})
}

func entry(s map[string]any) map[string]any {
	return map[string]any{"server": s, "_meta": map[string]any{
		"io.modelcontextprotocol.registry/official": map[string]any{"status": "active", "isLatest": true},
	}}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
