package connector_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/connector/connectortest"
)

func TestOAuthSignIn(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, connector.Config{})
	as := connectortest.NewOAuth(t)

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

	const redirect = "http://127.0.0.1:7777/oauth/callback"
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
	if got := as.Redirects(); len(got) != 1 || got[0] != redirect {
		t.Errorf("registered redirect URIs %v, want [%s]", got, redirect)
	}

	// The person signs in; the provider redirects to the callback.
	back, err := as.Authorize(authURL)
	if err != nil || !strings.HasPrefix(back, redirect+"?") || !strings.Contains(back, "state="+url.QueryEscape(q.Get("state"))) {
		t.Fatalf("the provider sends the browser to %s (%v), want the redirect URI with the state", back, err)
	}
	if !f.svc.OwnsAuth(q.Get("state")) || f.svc.OwnsAuth("forged-state") {
		t.Error("OwnsAuth does not tell the started sign-in from a forged state")
	}
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
	if _, err := f.svc.FinishAuth(ctx, q.Get("state"), "the-code"); err == nil || f.svc.OwnsAuth(q.Get("state")) {
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
	if !ok || json.Unmarshal([]byte(raw), &held) != nil || held.ClientID != "client-1" || held.Token.AccessToken != connectortest.Token {
		t.Errorf("token variable holds %q", raw)
	}
	if strings.Contains(mustMarshal(t, c), connectortest.Token) {
		t.Error("the connector shows the token")
	}

	tools, err := f.svc.Tools(ctx, agentA)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := findTool(t, tools, "secure__echo").Run(ctx, nil, json.RawMessage(`{"message":"Cy"}`)); err != nil || !strings.HasPrefix(out, "echo: Cy") {
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
