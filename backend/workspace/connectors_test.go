package workspace_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/connector/connectortest"
	"github.com/rerun-build/rerun-desktop/backend/sandbox"
	"github.com/rerun-build/rerun-desktop/backend/tool"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// TestMain lets this test binary be the stdio MCP server the tests start.
func TestMain(m *testing.M) {
	sandbox.Main() // first: a confined server re-runs this binary to confine itself
	connectortest.ServeStdioIfAsked()
	os.Exit(m.Run())
}

const marker = "RERUN_TEST_MARKER"

// appRunning gives a new agent of h's current workspace an app whose
// stdio server is this test binary, started through sh beside a sleep that
// only a kill of the whole process group ends, and calls its tool once.
// Every process of the server carries the returned value of marker in its
// environment.
func appRunning(t *testing.T, h *workspace.Home) (*workspace.Workspace, agent.Agent, string) {
	t.Helper()
	ctx := context.Background()
	w, _ := h.Workspace(h.Current())
	a, err := w.Agents.Create(ctx, agent.NewAgent{Name: "Ada", BoxID: firstBox(t, w)})
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 8)
	rand.Read(b)
	mark := hex.EncodeToString(b)
	if _, err := w.Connectors.AddCustom(ctx, a.ID, connector.Custom{
		Name: "Local echo", Command: "sh", Args: []string{"-c", `sleep 600 & exec "$0"`, exe},
		Env: map[string]string{connectortest.StdioEnv: "1", marker: mark},
	}); err != nil {
		t.Fatal(err)
	}
	tools, err := w.Connectors.Tools(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	echo, ok := tool.Find(tools, "local_echo__echo")
	if !ok {
		t.Fatalf("got %d tools, want local_echo__echo among them", len(tools))
	}
	if out, err := echo.Run(ctx, nil, json.RawMessage(`{"message":"hi"}`)); err != nil || out != "echo: hi" {
		t.Fatalf("echo: got %q, %v; want echo: hi", out, err)
	}
	if got := connectortest.Processes(t, marker, mark); len(got) < 2 {
		t.Fatalf("found %d server processes, want the server and its sleep", len(got))
	}
	return w, a, mark
}

// Closing the app ends the stdio servers its agents' apps started: none is
// left behind, not even a child the server spawned.
func TestAppServersEndWithTheApp(t *testing.T) {
	h := open(t, t.TempDir())
	_, _, mark := appRunning(t, h)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	connectortest.WaitNoProcesses(t, marker, mark)
}

// Stopping Serve (the app quitting) ends them too, and deleting an agent
// ends its own at once.
func TestAppServersEndWithServeAndTheirAgent(t *testing.T) {
	for _, end := range []string{"serve stops", "agent deleted"} {
		t.Run(end, func(t *testing.T) {
			h := open(t, t.TempDir())
			defer h.Close()
			ctx, stop := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { h.Serve(ctx); close(done) }()
			defer func() { stop(); <-done }()
			w, a, mark := appRunning(t, h)
			if end == "serve stops" {
				stop()
				<-done
			} else if err := w.DeleteAgent(context.Background(), a.ID); err != nil {
				t.Fatal(err)
			}
			connectortest.WaitNoProcesses(t, marker, mark)
		})
	}
}
