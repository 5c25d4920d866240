package run_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

// camera is a tool source whose one tool returns a picture.
type camera struct{ png []byte }

func (c camera) Tools(_ context.Context, a agent.Agent) ([]tool.Tool, error) {
	return []tool.Tool{{Name: "take_picture", Family: "browser", Description: "Take a picture.",
		Schema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		Run: func(ctx context.Context, env *tool.Env, _ json.RawMessage) (string, error) {
			env.Attach("image/png", c.png)
			return "took a picture", nil
		}}}, nil
}

func TestToolSourcesAndImages(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nnot-really-a-png")
	f := base(t)
	f.svc = run.NewService(run.Deps{DB: f.db, Workspace: "ws", Agents: f.agents, Boxes: f.boxes, Models: newModels(t, f.fake, "anthropic"),
		Bus: f.bus, SharedDir: filepath.Join(f.dir, "shared"), SharedDB: filepath.Join(f.dir, "shared.db"),
		Sources: []run.ToolSource{camera{png}}}, run.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.svc.Serve(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	a := f.agent("Photographer")
	f.fake.Script(llmtest.Tools(llmtest.ToolCall{ID: "p", Name: "take_picture"}), llmtest.Text("Nice picture."))
	r := f.say(a, "take a picture")
	if r.Status != run.Done {
		t.Fatalf("run = %s %s", r.Status, r.Error)
	}
	reqs := f.fake.Requests()
	if names := reqs[0].Tools; len(names) == 0 || names[len(names)-1].Name != "take_picture" {
		t.Fatalf("the model was not offered the source's tool: %+v", names)
	}
	var got []llmtest.Image
	for _, m := range reqs[1].Messages {
		for _, tr := range m.ToolResults {
			got = append(got, tr.Images...)
		}
	}
	if len(got) != 1 || got[0].MediaType != "image/png" || !bytes.Equal(got[0].Data, png) {
		t.Fatalf("images the model got = %+v", got)
	}
	steps, _ := f.svc.Steps(context.Background(), r.ID)
	var res run.ToolResultData
	json.Unmarshal(steps[3].Data, &res)
	if len(res.Images) != 1 {
		t.Fatalf("tool result step = %+v, want one image ref", res)
	}
	path, err := f.svc.ImagePath(a.ID, res.Images[0])
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, png) {
		t.Fatal("the image file does not hold the picture")
	}
	if _, err := f.svc.ImagePath(a.ID, run.ImageRef{Path: "../agent.db"}); err == nil {
		t.Fatal("ImagePath accepted a path out of shots/")
	}
}
