package connector_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/secret"
)

// An app server's headers carry a variable bound to other hosts: the app
// is not connected and the server receives nothing; bound to the server's
// host it connects.
func TestHTTPServerHeaderVariableBoundToOtherHosts(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, connector.Config{})
	ts := newTestServer()
	var requests atomic.Int32
	h := server.NewStreamableHTTPServer(ts.mcp)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Header.Get("Authorization") != "Bearer s3cret-token" {
			http.Error(w, "bad token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	value, hosts := "s3cret-token", []string{"mcp.acme.example"}
	if _, err := f.vars.Update(ctx, "ACME_TOKEN", secret.Change{Value: &value, Hosts: &hosts}); err != nil {
		t.Fatal(err)
	}
	inst, err := f.svc.AddCustom(ctx, agentA, connector.Custom{Name: "Acme", URL: srv.URL + "/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${ACME_TOKEN}"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.Test(ctx, inst.Connector.ID)
	want := "Acme is not connected: the variable ACME_TOKEN may only be sent to mcp.acme.example, and this would send it to 127.0.0.1: nothing was sent"
	if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Test = %v, want %q", err, want)
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("the server received %d requests", n)
	}

	hosts = []string{"127.0.0.1"}
	if _, err := f.vars.Update(ctx, "ACME_TOKEN", secret.Change{Hosts: &hosts}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Test(ctx, inst.Connector.ID); err != nil {
		t.Fatalf("bound to the server's host: %v", err)
	}
	if requests.Load() == 0 {
		t.Fatal("the server received nothing")
	}
}
