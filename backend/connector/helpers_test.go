package connector_test

import (
	"context"
	"crypto/rand"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/connector/connectortest"
	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/sandbox"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/store/storetest"
)

// TestMain lets this test binary be the stdio MCP server the tests start.
func TestMain(m *testing.M) {
	sandbox.Main() // first: a confined server re-runs this binary to confine itself
	connectortest.ServeStdioIfAsked()
	os.Exit(m.Run())
}

// fixture is a workspace with two agents, real variables and the service.
type fixture struct {
	db   *store.DB
	vars *secret.Variables
	bus  *event.Bus
	svc  *connector.Service
}

const (
	agentA = "ag_a"
	agentB = "ag_b"
)

func newFixture(t *testing.T, cfg connector.Config) *fixture {
	t.Helper()
	return newFixtureCatalog(t, cfg, nil)
}

// newFixtureCatalog is newFixture installing from cat (nil: the embedded
// catalog).
func newFixtureCatalog(t *testing.T, cfg connector.Config, cat *connector.Catalog) *fixture {
	t.Helper()
	db := storetest.Open(t)
	ctx := context.Background()
	now := store.FormatTime(time.Now())
	if _, err := db.ExecContext(ctx, `INSERT INTO boxes (id, name, position, created_at) VALUES ('bx_1', 'Box', 0, ?)`, now); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{agentA, agentB} {
		if _, err := db.ExecContext(ctx, `INSERT INTO agents (id, name, handle, box_id, created_at, updated_at) VALUES (?, ?, ?, 'bx_1', ?, ?)`,
			id, id, id, now, now); err != nil {
			t.Fatal(err)
		}
	}
	key := make([]byte, 32)
	rand.Read(key)
	box, err := secret.NewBox(key)
	if err != nil {
		t.Fatal(err)
	}
	bus := &event.Bus{}
	vars, err := secret.NewVariables(db, box, "ws", bus)
	if err != nil {
		t.Fatal(err)
	}
	var log *slog.Logger
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 30 * time.Second
	}
	svc, err := connector.New(connector.Deps{DB: db, Workspace: "ws", Vars: vars, Bus: bus, Logger: log, Catalog: cat}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	return &fixture{db: db, vars: vars, bus: bus, svc: svc}
}

func (f *fixture) set(t *testing.T, name, value string) {
	t.Helper()
	if _, err := f.vars.Set(context.Background(), name, value); err != nil {
		t.Fatal(err)
	}
}

func toolNames(c connector.Connector) map[string]string {
	out := map[string]string{}
	for _, t := range c.Tools {
		out[t.AgentName] = t.State
	}
	return out
}
