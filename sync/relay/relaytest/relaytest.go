// Package relaytest starts a relay in process for tests: a real
// relay.Server on a real store (SQLite in t.TempDir()) behind httptest, on
// loopback.
package relaytest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
	"github.com/rerun-build/rerun-desktop/sync/relay"
)

// Relay is a running relay.
type Relay struct {
	URL    string
	Server *relay.Server
	Store  relay.Store
}

// Start runs a relay on a new SQLite store until the test ends. cfg.Logger
// nil discards the logs.
func Start(t testing.TB, cfg relay.Config) *Relay {
	t.Helper()
	store, err := relay.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "relay.db"))
	if err != nil {
		t.Fatal(err)
	}
	return StartOn(t, store, cfg)
}

// StartOn runs a relay on store until the test ends, then closes store.
func StartOn(t testing.TB, store relay.Store, cfg relay.Config) *Relay {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.PushHosts == nil {
		// pushtest's service listens on 127.0.0.1.
		cfg.PushHosts = append(slices.Clone(relay.DefaultPushHosts), "127.0.0.1")
	}
	var srv *relay.Server
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { srv.ServeHTTP(w, r) }))
	if cfg.PublicURL == "" {
		cfg.PublicURL = hs.URL
	}
	srv = relay.New(store, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		hs.CloseClientConnections()
		hs.Close()
		store.Close()
	})
	return &Relay{URL: hs.URL, Server: srv, Store: store}
}

// Link links a new workspace and registers the hashes of tokens for it.
func (r *Relay) Link(t testing.TB, tokens ...string) protocol.Link {
	t.Helper()
	l, err := r.Server.CreateWorkspace(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	hashes := []string{}
	for _, tok := range tokens {
		hashes = append(hashes, protocol.TokenHash(tok))
	}
	if err := r.Store.SetTokens(context.Background(), l.WorkspaceID, hashes); err != nil {
		t.Fatal(err)
	}
	return l
}
