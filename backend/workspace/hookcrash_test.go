package workspace_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"encoding/json"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/trigger"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// TestHookProcess is the process TestHookSurvivesKill kills: it serves one
// trigger's intake and nothing else (no run executes), writes its URL, and
// waits for the signal.
func TestHookProcess(t *testing.T) {
	dir := os.Getenv("RERUN_HOOK_DIR")
	if dir == "" {
		t.Skip("run by TestHookSurvivesKill")
	}
	ctx := context.Background()
	h, err := workspace.Open(ctx, workspace.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := h.Workspace(h.Current())
	boxes, _ := w.Boxes.List(ctx)
	a, err := w.Agents.Create(ctx, agent.NewAgent{Name: "Hooked", BoxID: boxes[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	token, _, err := w.Triggers.Create(ctx, trigger.NewTrigger{AgentID: a.ID, Name: "Orders", Instruction: "File the order."})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(w.Triggers.Handler())
	if err := os.WriteFile(filepath.Join(dir, "hook-url"), []byte(srv.URL+"/hooks/"+token), 0o600); err != nil {
		t.Fatal(err)
	}
	select {} // until SIGKILL
}

// A process killed right after answering 202 still runs the queued run
// after a restart: the 202 comes only once the run is durably queued.
func TestHookSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	dir := t.TempDir()
	child := exec.Command(os.Args[0], "-test.run=^TestHookProcess$")
	child.Env = append(os.Environ(), "RERUN_HOOK_DIR="+dir)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	var url []byte
	for deadline := time.Now().Add(waittest.Patience); len(url) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the hook process never started")
		}
		url, _ = os.ReadFile(filepath.Join(dir, "hook-url"))
	}
	res, err := http.Post(string(url), "application/json", strings.NewReader(`{"order":"A-1042"}`))
	if err != nil {
		t.Fatal(err)
	}
	var accepted struct {
		RunID string `json:"run_id"`
	}
	json.NewDecoder(res.Body).Decode(&accepted)
	res.Body.Close()
	child.Process.Signal(syscall.SIGKILL) // right after the 202
	child.Wait()
	if res.StatusCode != http.StatusAccepted || accepted.RunID == "" {
		t.Fatalf("hook answered %d %+v, want 202 with a run id", res.StatusCode, accepted)
	}

	fake := llmtest.New(t)
	fake.Script(llmtest.Text("Filed order A-1042."))
	h, err := workspace.Open(context.Background(), workspace.Config{DataDir: dir,
		LLM: llm.Config{OpenAIKey: "k", OpenAIBaseURL: fake.OpenAIURL()}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.Serve(ctx); close(done) }()
	defer func() { stop(); <-done; h.Close() }()
	w, _ := h.Workspace(h.Current())
	waitCtx, cancel := context.WithTimeout(ctx, waittest.Patience)
	defer cancel()
	r, err := w.Runs.Wait(waitCtx, accepted.RunID)
	if err != nil || r.Status != run.Done || r.Source != run.SourceTrigger || !strings.Contains(r.Input, "A-1042") {
		t.Fatalf("after the restart the run is %s (%v), source %s, input %q", r.Status, err, r.Source, r.Input)
	}
}
