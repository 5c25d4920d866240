package httpapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// waitStatus polls a run until it has the status.
func (e *env) waitStatus(t *testing.T, id, status string) {
	t.Helper()
	for i := 0; i < 500; i++ {
		var r map[string]any
		e.do(t, "GET", "/api/workspaces/"+e.ws+"/runs/"+id, "", &r)
		if r["status"] == status {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("run %s never got status %s", id, status)
}

func TestCardsThroughTheAPI(t *testing.T) {
	fake := llmtest.New(t)
	e := newEnvWith(t, workspace.Config{LLM: llm.Config{OpenAIKey: "k", OpenAIBaseURL: fake.OpenAIURL()}})
	base := "/api/workspaces/" + e.ws
	var a struct{ ID string }
	e.do(t, "POST", base+"/agents", `{"name":"Keyholder","box_id":"`+e.box+`","capabilities":["human"]}`, &a)

	fake.Script(llmtest.Reply{Text: "I need the key.", ToolCalls: []llmtest.ToolCall{{ID: "c", Name: "request_credential",
		Args: `{"variable":"ACME_TOKEN","label":"Acme token"}`}}}, llmtest.Text("Thanks, stored."))
	var started run.Run
	e.do(t, "POST", base+"/agents/"+a.ID+"/messages", `{"text":"set up acme"}`, &started)
	e.waitStatus(t, started.ID, "paused")

	var transcript struct {
		Pause *run.Pause
		Runs  []struct{ Pauses []run.Pause }
	}
	e.do(t, "GET", base+"/sessions/"+started.SessionID, "", &transcript)
	if transcript.Pause == nil || transcript.Pause.Kind != "credential" || len(transcript.Runs[0].Pauses) != 1 {
		t.Fatalf("session detail pause = %+v", transcript.Pause)
	}
	p := transcript.Pause

	// The chat is held while the card is open.
	if got := e.do(t, "POST", base+"/agents/"+a.ID+"/messages", `{"text":"hello?"}`, nil); got != 409 {
		t.Fatalf("message while a card is open: %d, want 409", got)
	}
	var open []run.Pause
	e.do(t, "GET", base+"/pauses?status=open&agent_id="+a.ID, "", &open)
	if len(open) != 1 || open[0].ID != p.ID {
		t.Fatalf("open pauses = %+v", open)
	}
	if got := e.do(t, "GET", base+"/pauses?status=maybe", "", nil); got != 400 {
		t.Fatalf("bad status filter: %d", got)
	}
	if got := e.do(t, "POST", base+"/pauses/"+p.ID+"/answer", `{"value":"ab"}`, nil); got != 400 {
		t.Fatalf("short value: %d, want 400", got)
	}
	const secret = "acme-CANARY-0f9e8d7c6b5a"
	var answered run.Pause
	if got := e.do(t, "POST", base+"/pauses/"+p.ID+"/answer", `{"value":"`+secret+`"}`, &answered); got != 200 || answered.Status != "answered" {
		t.Fatalf("answer: %d %+v", got, answered)
	}
	if strings.Contains(string(answered.Answer), secret) {
		t.Fatal("the answer echoes the secret")
	}
	if got := e.do(t, "POST", base+"/pauses/"+p.ID+"/answer", `{"value":"`+secret+`"}`, nil); got != 409 {
		t.Fatalf("second answer: %d, want 409", got)
	}
	done := e.waitRun(t, started.ID)
	if done["status"] != "done" || done["output"] != "Thanks, stored." {
		t.Fatalf("run = %v", done)
	}
	// Nothing the UI reads back carries the value.
	for _, path := range []string{"/sessions/" + started.SessionID, "/runs/" + started.ID, "/pauses", "/pauses/" + p.ID, "/variables", "/notifications"} {
		if body := e.raw(t, "GET", base+path); strings.Contains(body, secret) {
			t.Errorf("GET %s returns the secret value", path)
		}
	}
	var vars struct {
		Variables []struct{ Name string }
	}
	e.do(t, "GET", base+"/variables", "", &vars)
	if len(vars.Variables) != 1 || vars.Variables[0].Name != "ACME_TOKEN" {
		t.Fatalf("variables = %+v", vars)
	}
	var board struct {
		Activity map[string]run.Activity
	}
	e.do(t, "GET", base+"/board", "", &board)
	if board.Activity[a.ID].Waiting != 0 {
		t.Fatalf("board still shows the agent waiting: %+v", board.Activity[a.ID])
	}
}
