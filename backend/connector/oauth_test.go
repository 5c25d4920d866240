package connector_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/rerun-build/rerun-desktop/backend/connector"
)

// authServer is an MCP server behind OAuth 2.1 as the MCP authorization
// spec describes it: protected resource metadata, authorization server
// metadata, dynamic client registration, a token endpoint checking PKCE.
type authServer struct {
	*httptest.Server
	mu        sync.Mutex
	challenge string // the code_challenge the browser was sent with
	redirects []string
}

func newAuthServer(t *testing.T, ts *testServer) *authServer {
	a := &authServer{}
	mcpHandler := server.NewStreamableHTTPServer(ts.mcp)
	mux := http.NewServeMux()
	writeJSON := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer good-token" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+a.URL+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, "sign in", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})
	prm := func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"resource": a.URL + "/mcp", "authorization_servers": []string{a.URL}})
	}
	mux.HandleFunc("/.well-known/oauth-protected-resource", prm)
	mux.HandleFunc("/.well-known/oauth-protected-resource/", prm)
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{
			"issuer": a.URL, "authorization_endpoint": a.URL + "/authorize", "token_endpoint": a.URL + "/token",
			"registration_endpoint": a.URL + "/register", "response_types_supported": []string{"code"},
			"grant_types_supported":            []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"},
		})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		a.mu.Lock()
		a.redirects = req.RedirectURIs
		a.mu.Unlock()
		writeJSON(w, 201, map[string]any{"client_id": "client-1", "token_endpoint_auth_method": "none", "redirect_uris": req.RedirectURIs})
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		a.mu.Lock()
		challenge := a.challenge
		a.mu.Unlock()
		sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
		switch {
		case r.Form.Get("grant_type") != "authorization_code" || r.Form.Get("code") != "the-code":
			writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
		case base64.RawURLEncoding.EncodeToString(sum[:]) != challenge:
			writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "PKCE verifier does not match"})
		case r.Form.Get("client_id") != "client-1":
			writeJSON(w, 401, map[string]string{"error": "invalid_client"})
		default:
			writeJSON(w, 200, map[string]any{"access_token": "good-token", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "refresh-1"})
		}
	})
	a.Server = httptest.NewServer(mux)
	t.Cleanup(a.Close)
	return a
}

func TestOAuthSignIn(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, connector.Config{})
	as := newAuthServer(t, newTestServer())

	inst, err := f.svc.AddCustom(ctx, agentA, connector.Custom{Name: "Secure", URL: as.URL + "/mcp", OAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	c := inst.Connector
	if c.Auth != connector.AuthOAuth || c.Status != connector.StatusNeedsSignIn || inst.Form != nil || !strings.Contains(c.Next, "browser") {
		t.Fatalf("got auth %q status %q form %v next %q; want oauth, needs_sign_in, no form, a browser sign-in", c.Auth, c.Status, inst.Form, c.Next)
	}
	tokenVar := c.Missing[0]
	if !strings.HasSuffix(tokenVar, "_OAUTH_TOKEN") {
		t.Fatalf("missing %v, want the token variable", c.Missing)
	}

	const redirect = "http://127.0.0.1:7777/api/connectors/oauth/callback"
	authURL, err := f.svc.StartAuth(ctx, c.ID, redirect)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if u.Path != "/authorize" || q.Get("client_id") != "client-1" || q.Get("redirect_uri") != redirect ||
		q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("state") == "" {
		t.Fatalf("got authorization URL %s", authURL)
	}
	if len(as.redirects) != 1 || as.redirects[0] != redirect {
		t.Errorf("registered redirect URIs %v, want [%s]", as.redirects, redirect)
	}

	// The person signs in; the provider redirects to the callback.
	as.mu.Lock()
	as.challenge = q.Get("code_challenge")
	as.mu.Unlock()
	if _, err := f.svc.FinishAuth(ctx, "forged-state", "the-code"); err == nil {
		t.Error("a callback with an unknown state was accepted")
	}
	c, err = f.svc.FinishAuth(ctx, q.Get("state"), "the-code")
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != connector.StatusConnected || len(c.Missing) != 0 {
		t.Fatalf("after sign-in: status %q missing %v", c.Status, c.Missing)
	}
	if _, err := f.svc.FinishAuth(ctx, q.Get("state"), "the-code"); err == nil {
		t.Error("a state was accepted twice")
	}
	// The token is kept in a variable, never in the app's configuration.
	var held struct {
		ClientID string `json:"client_id"`
		Token    struct {
			AccessToken string `json:"access_token"`
		} `json:"token"`
	}
	raw, ok := f.vars.Lookup(tokenVar)
	if !ok || json.Unmarshal([]byte(raw), &held) != nil || held.ClientID != "client-1" || held.Token.AccessToken != "good-token" {
		t.Errorf("token variable holds %q", raw)
	}
	if strings.Contains(mustMarshal(t, c), "good-token") {
		t.Error("the connector shows the token")
	}

	tools, err := f.svc.Tools(ctx, agentA)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := findTool(t, tools, "secure__greet").Run(ctx, nil, json.RawMessage(`{"name":"Cy"}`)); err != nil || out != "Hello, Cy!" {
		t.Errorf("got %q, %v", out, err)
	}
}

func TestCatalogOAuthAppWaitsForBrowserSignIn(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, connector.Config{})
	inst, err := f.svc.Install(ctx, agentA, "linear")
	if err != nil {
		t.Fatal(err)
	}
	c := inst.Connector
	if c.Status != connector.StatusNeedsSignIn || inst.Form != nil || len(c.Missing) != 1 || c.Missing[0] != "LINEAR_OAUTH_TOKEN" {
		t.Errorf("got status %q form %v missing %v; want needs_sign_in, no form, LINEAR_OAUTH_TOKEN", c.Status, inst.Form, c.Missing)
	}
	if _, err := f.svc.StartAuth(ctx, c.ID, "not a url"); err == nil {
		t.Error("a bad redirect URI was accepted")
	}
	gh, err := f.svc.Install(ctx, agentA, "github")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.StartAuth(ctx, gh.Connector.ID, "http://127.0.0.1:1/cb"); err == nil {
		t.Error("an API-key app started a browser sign-in")
	}
}
