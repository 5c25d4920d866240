package workspace_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// TestSecretsCanary stores 50 variables, has an agent's shell command print
// each one raw, base64 (wrapped like base64(1)), URL-encoded, split across
// lines and inside JSON, and then looks for the values in every byte that
// went to the model, every file of the data directory and the log.
func TestSecretsCanary(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(t.TempDir(), "rerun.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	fake := llmtest.New(t)
	ctx := context.Background()
	h, err := workspace.Open(ctx, workspace.Config{DataDir: dir,
		Logger: slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelDebug})),
		LLM:    llm.Config{OpenAIKey: "k", OpenAIBaseURL: fake.OpenAIURL()}})
	if err != nil {
		t.Fatal(err)
	}
	serveCtx, stop := context.WithCancel(ctx)
	served := make(chan struct{})
	go func() { h.Serve(serveCtx); close(served) }()
	defer func() { stop(); <-served; h.Close() }()
	w, err := h.Workspace(h.Current())
	if err != nil {
		t.Fatal(err)
	}

	rng := rand.New(rand.NewPCG(7, 11))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=&?_-"
	values := map[string]string{}
	var script strings.Builder
	for i := range 50 {
		v := make([]byte, 16+rng.IntN(25))
		for j := range v {
			v[j] = alphabet[rng.IntN(len(alphabet))]
		}
		name := fmt.Sprintf("CANARY_%02d", i)
		values[name] = string(v)
		if _, err := w.Variables.Set(ctx, name, string(v)); err != nil {
			t.Fatal(err)
		}
		ref := "${" + name + "}"
		fmt.Fprintf(&script, "printf 'raw %%s\\n' '%s'; printf '%%s' '%s' | base64; ", ref, ref)
		fmt.Fprintf(&script, "printf 'url %%s\\n' \"$(printf '%%s' '%s' | sed 's/%%/%%25/g; s/+/%%2B/g; s|/|%%2F|g; s/=/%%3D/g; s/&/%%26/g; s/?/%%3F/g')\"; ", ref)
		fmt.Fprintf(&script, "printf '%%s' '%s' | fold -w 7; echo; printf '{\"token\":\"%%s\"}\\n' '%s';\n", ref, ref)
	}
	a, err := w.Agents.Create(ctx, agent.NewAgent{Name: "Leaky", BoxID: firstBox(t, w), Capabilities: []string{"shell"},
		AskFirst: map[string]bool{"shell": false}})
	if err != nil {
		t.Fatal(err)
	}
	input, _ := json.Marshal(map[string]any{"command": script.String()})
	fake.Script(llmtest.Tools(llmtest.ToolCall{ID: "leak", Name: "run_command", Args: string(input)}), llmtest.Text("Printed them."))
	sess, _ := w.Runs.ChatSession(ctx, a.ID)
	r, err := w.Runs.Start(ctx, a.ID, sess.ID, run.SourceChat, "print the canaries", run.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, waittest.Patience)
	defer cancel()
	if r, err = w.Runs.Wait(waitCtx, r.ID); err != nil || r.Status != run.Done {
		t.Fatalf("run = %s %v %s", r.Status, err, r.Error)
	}

	// What the model got: the command ran (masks are there), no value is.
	reqs := fake.Requests()
	var sent bytes.Buffer
	for _, req := range reqs {
		sent.Write(req.Body)
		for _, m := range req.Messages {
			for _, tr := range m.ToolResults {
				sent.WriteString(tr.Content)
			}
		}
	}
	if n := strings.Count(sent.String(), "[redacted:CANARY_"); n < 50*5 {
		t.Fatalf("the model saw %d masks, want at least 250: the command did not print the values", n)
	}
	h.Close() // flush the databases before reading their files
	stop()
	<-served
	logFile.Sync()

	haystacks := map[string][]byte{"requests to the model": sent.Bytes()}
	logBytes, _ := os.ReadFile(logPath)
	haystacks["log"] = logBytes
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			haystacks[rel] = b
		}
		return nil
	})
	found := 0
	for where, b := range haystacks {
		flat := strings.NewReplacer("\n", "", "\r", "", `\n`, "").Replace(string(b))
		for name, v := range values {
			for form, needle := range map[string]string{
				"raw": v, "base64": base64.StdEncoding.EncodeToString([]byte(v)),
				"url": url.QueryEscape(v), "json": strings.ReplaceAll(v, "&", `\u0026`),
			} {
				if strings.Contains(flat, needle) {
					found++
					t.Errorf("%s holds %s of %s", where, form, name)
				}
			}
		}
	}
	t.Logf("searched %d files and streams for 50 values in 4 forms: %d found", len(haystacks), found)
}

func firstBox(t *testing.T, w *workspace.Workspace) string {
	t.Helper()
	boxes, err := w.Boxes.List(context.Background())
	if err != nil || len(boxes) == 0 {
		t.Fatal("no box")
	}
	return boxes[0].ID
}
