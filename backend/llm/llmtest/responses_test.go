package llmtest_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
)

// The Responses API as Codex sends it: instructions, a developer message,
// namespaced MCP tools and a function call's output read back; the stream
// carries the scripted text and tool call as typed events ending in
// response.completed with the output items.
func TestResponsesAPI(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script(llmtest.Reply{Text: "On it.", ToolCalls: []llmtest.ToolCall{{Name: "create_agent", Namespace: "mcp__rerun", Args: `{"name":"Scout"}`}}})
	body := `{"model":"gpt-test","stream":true,"instructions":"Be brief.",
	  "tools":[{"type":"function","name":"exec_command","parameters":{}},
	           {"type":"namespace","name":"mcp__rerun","tools":[{"type":"function","name":"create_agent","description":"Make one.","parameters":{"type":"object"}}]}],
	  "input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"Sandbox notes."}]},
	           {"type":"message","role":"user","content":[{"type":"input_text","text":"Hire Scout"}]},
	           {"type":"function_call","call_id":"call_1","name":"list_agents","namespace":"mcp__rerun","arguments":"{}"},
	           {"type":"function_call_output","call_id":"call_1","output":"no agents"}]}`
	resp, err := http.Post(srv.OpenAIURL()+"/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, ct)
	}
	var types, text []string
	var done struct {
		Response struct {
			Status string `json:"status"`
			Output []struct {
				Type, Name, Namespace string
			} `json:"output"`
			Usage struct {
				InputTokens int `json:"input_tokens"`
			} `json:"usage"`
		} `json:"response"`
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct{ Type, Delta string }
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		types = append(types, ev.Type)
		if ev.Type == "response.output_text.delta" {
			text = append(text, ev.Delta)
		}
		if ev.Type == "response.completed" {
			json.Unmarshal([]byte(data), &done)
		}
	}
	if types[0] != "response.created" || types[len(types)-1] != "response.completed" {
		t.Errorf("events %v, want response.created first and response.completed last", types)
	}
	if strings.Join(text, "") != "On it." {
		t.Errorf("text deltas %q", text)
	}
	if r := done.Response; r.Status != "completed" || len(r.Output) != 2 || r.Output[1].Namespace != "mcp__rerun" || r.Usage.InputTokens == 0 {
		t.Errorf("completed response %+v, want a message and a call with usage", r)
	}

	req := srv.Requests()[0]
	if req.API != "responses" || req.System != "Be brief.\nSandbox notes." || !req.Stream {
		t.Errorf("request api %q system %q stream %v", req.API, req.System, req.Stream)
	}
	if len(req.Tools) != 2 || req.Tools[1].Namespace != "mcp__rerun" || req.Tools[1].Name != "create_agent" {
		t.Errorf("tools %+v, want exec_command and mcp__rerun/create_agent", req.Tools)
	}
	if len(req.Messages) != 3 || req.Messages[1].ToolCalls[0].Namespace != "mcp__rerun" ||
		req.Messages[2].ToolResults[0].Content != "no agents" {
		t.Errorf("messages %+v, want the user's, the call and its output", req.Messages)
	}
}
