package connector_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/connector/connectortest"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/secret"
)

// An app with its own OAuth client: the client id and secret are sent to
// the sign-in server (the id in the sign-in URL, both to the token
// endpoint), so a client variable limited to other hosts stops the sign-in
// before the URL exists; the secret is never in the URL.
func TestOAuthSignInClientVariablesHostChecked(t *testing.T) {
	ctx := context.Background()
	as := connectortest.NewOAuth(t)
	cat, err := connector.ParseCatalog([]byte(`version: 1
apps:
  - id: own
    name: Own
    category: developer
    description: An app with its own OAuth client.
    homepage: https://example.com
    auth: oauth
    transport:
      type: http
      url: ${OWN_URL}
    oauth:
      client_id_var: OWN_CLIENT_ID
      client_secret_var: OWN_CLIENT_SECRET
    variables:
      - name: OWN_URL
        label: URL
        help: The server.
      - name: OWN_CLIENT_ID
        label: Client ID
        help: The id.
      - name: OWN_CLIENT_SECRET
        label: Client secret
        help: The secret.
    skill: |
      ---
      name: own
      description: Own app.
      ---
      Use own__echo.
`))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixtureCatalog(t, connector.Config{}, cat)
	const secretValue = "CANARY-client/secret+&= x"
	set := func(name, value string, hosts ...string) {
		t.Helper()
		if _, err := f.vars.Update(ctx, name, secret.Change{Value: &value, Hosts: &hosts}); err != nil {
			t.Fatal(err)
		}
	}
	f.set(t, "OWN_URL", as.URL+"/mcp")
	set("OWN_CLIENT_ID", "own-client-id", "127.0.0.1")
	set("OWN_CLIENT_SECRET", secretValue, "auth.own.example")
	inst, err := f.svc.Install(ctx, agentA, "own")
	if err != nil {
		t.Fatal(err)
	}
	id := inst.Connector.ID
	const redirect = "http://127.0.0.1:7777/oauth/callback"

	_, err = f.svc.StartAuth(ctx, id, redirect)
	want := "the variable OWN_CLIENT_SECRET may only be sent to auth.own.example, and this would send it to 127.0.0.1: nothing was sent"
	if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), "the sign-in to Own did not start") || !strings.Contains(err.Error(), want) {
		t.Fatalf("secret bound elsewhere: err = %v, want %q", err, want)
	}

	set("OWN_CLIENT_SECRET", secretValue, "127.0.0.1")
	set("OWN_CLIENT_ID", "own-client-id", "localhost")
	if _, err := f.svc.StartAuth(ctx, id, redirect); err == nil || !strings.Contains(err.Error(), "the variable OWN_CLIENT_ID may only be sent to localhost, and this would send it to 127.0.0.1") {
		t.Fatalf("client id bound elsewhere: err = %v", err)
	}

	set("OWN_CLIENT_ID", "own-client-id", "127.0.0.1")
	authURL, err := f.svc.StartAuth(ctx, id, redirect)
	if err != nil {
		t.Fatalf("both allowed: %v", err)
	}
	u, err := url.Parse(authURL)
	if err != nil || u.Query().Get("client_id") != "own-client-id" {
		t.Fatalf("sign-in URL %s (%v), want the app's client id", authURL, err)
	}
	for _, form := range []string{secretValue, url.QueryEscape(secretValue), url.PathEscape(secretValue), "CANARY"} {
		if strings.Contains(authURL, form) {
			t.Errorf("the sign-in URL %s carries the client secret (%q)", authURL, form)
		}
	}
}
