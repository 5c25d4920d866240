package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/httpapi"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/models"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

func (e *env) waitRun(t *testing.T, id string) map[string]any {
	t.Helper()
	for i := 0; i < 500; i++ {
		var r map[string]any
		e.do(t, "GET", "/api/workspaces/"+e.ws+"/runs/"+id, "", &r)
		if s := r["status"]; s == "done" || s == "failed" || s == "cancelled" {
			return r
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("run %s did not finish", id)
	return nil
}

func TestChatRunThroughTheAPI(t *testing.T) {
	fake := llmtest.New(t)
	e := newEnvWith(t, workspace.Config{LLM: llm.Config{OpenAIKey: "k", OpenAIBaseURL: fake.OpenAIURL()}})
	base := "/api/workspaces/" + e.ws
	var a struct{ ID string }
	e.do(t, "POST", base+"/agents", `{"name":"Chatty","box_id":"`+e.box+`","capabilities":["files"]}`, &a)

	// Listen for streamed text before sending.
	ctx, cancel := context.WithTimeout(context.Background(), waittest.Patience)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()

	fake.Script(llmtest.Tools(llmtest.ToolCall{ID: "t1", Name: "write_file", Args: `{"path":"a.txt","content":"x"}`}),
		llmtest.Reply{Chunks: []string{"All ", "done."}})
	var started run.Run
	if got := e.do(t, "POST", base+"/agents/"+a.ID+"/messages", `{"text":"write a file"}`, &started); got != 202 || started.Status != run.Queued {
		t.Fatalf("send message: %d %+v", got, started)
	}
	var deltas strings.Builder
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() && !strings.Contains(deltas.String(), "All done.") {
		if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(line, `"run":"`+started.ID) {
			var d struct{ Text string }
			json.Unmarshal([]byte(line), &d)
			deltas.WriteString(d.Text)
		}
	}
	if deltas.String() != "All done." {
		t.Errorf("streamed deltas = %q", deltas.String())
	}
	done := e.waitRun(t, started.ID)
	if done["status"] != "done" || done["output"] != "All done." {
		t.Fatalf("run = %v", done)
	}
	steps := done["steps"].([]any)
	if len(steps) != 5 {
		t.Errorf("run log has %d steps, want input, model, tool_call, tool_result, model", len(steps))
	}

	var transcript struct {
		Session run.Session
		Runs    []struct {
			ID    string
			Steps []run.Step
		}
	}
	e.do(t, "GET", base+"/sessions/"+started.SessionID, "", &transcript)
	if transcript.Session.Title != "write a file" || len(transcript.Runs) != 1 || len(transcript.Runs[0].Steps) != 5 {
		t.Errorf("transcript = %+v", transcript)
	}
	var runs []run.Run
	e.do(t, "GET", base+"/agents/"+a.ID+"/runs", "", &runs)
	if len(runs) != 1 || runs[0].InputTokens == 0 {
		t.Errorf("runs = %+v", runs)
	}
	var usage []run.DayUsage
	e.do(t, "GET", base+"/agents/"+a.ID+"/usage?days=7", "", &usage)
	if len(usage) != 7 || usage[6].Runs != 1 {
		t.Errorf("usage = %+v, want 7 days with today's run last", usage)
	}
	var board struct {
		Activity map[string]run.Activity
	}
	e.do(t, "GET", base+"/board", "", &board)
	if board.Activity[a.ID].LastStatus != run.Done {
		t.Errorf("board activity = %+v", board.Activity)
	}

	// A new chat, then switching its model.
	var sess run.Session
	if got := e.do(t, "POST", base+"/agents/"+a.ID+"/sessions", `{}`, &sess); got != 201 {
		t.Fatalf("new session: %d", got)
	}
	if got := e.do(t, "PATCH", base+"/sessions/"+sess.ID, `{"provider":"openai","model":"gpt-4o"}`, &sess); got != 200 || sess.Model != "gpt-4o" {
		t.Errorf("switch model: %d %+v", got, sess)
	}
	var list []run.Session
	e.do(t, "GET", base+"/agents/"+a.ID+"/sessions", "", &list)
	if len(list) != 2 {
		t.Errorf("sessions = %d, want 2", len(list))
	}
}

func TestCancelThroughTheAPI(t *testing.T) {
	fake := llmtest.New(t)
	e := newEnvWith(t, workspace.Config{LLM: llm.Config{AnthropicKey: "k", AnthropicBaseURL: fake.AnthropicURL()}})
	base := "/api/workspaces/" + e.ws
	var a struct{ ID string }
	e.do(t, "POST", base+"/agents", `{"name":"Slow","box_id":"`+e.box+`"}`, &a)
	fake.Script(llmtest.Reply{Text: "late", Delay: 30 * time.Second})
	var started run.Run
	e.do(t, "POST", base+"/agents/"+a.ID+"/messages", `{"text":"take your time"}`, &started)
	for len(fake.Requests()) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	var got run.Run
	if code := e.do(t, "POST", base+"/runs/"+started.ID+"/cancel", "", &got); code != 200 || got.Status != run.Cancelled {
		t.Errorf("cancel: %d %s", code, got.Status)
	}
}

func TestNoModelConfiguredFailsClearly(t *testing.T) {
	e := newEnv(t)
	base := "/api/workspaces/" + e.ws
	var a struct{ ID string }
	e.do(t, "POST", base+"/agents", `{"name":"Alone","box_id":"`+e.box+`"}`, &a)
	var started run.Run
	e.do(t, "POST", base+"/agents/"+a.ID+"/messages", `{"text":"hello"}`, &started)
	done := e.waitRun(t, started.ID)
	if done["status"] != "failed" || !strings.Contains(done["error"].(string), "Settings → Models") {
		t.Errorf("run without a model = %v %v", done["status"], done["error"])
	}
	var out map[string]string
	if code := e.do(t, "POST", base+"/agents/"+a.ID+"/messages", `{"text":"  "}`, &out); code != 400 {
		t.Errorf("empty message: %d %v", code, out)
	}
	if code := e.do(t, "POST", base+"/agents/ag_nope/messages", `{"text":"hi"}`, &out); code != 404 {
		t.Errorf("unknown agent: %d", code)
	}
}

func TestModelSettingsNeverReturnKeys(t *testing.T) {
	e := newEnv(t)
	var settings []models.ProviderSetting // before the variable models hides the package
	var models struct {
		Providers []llm.ProviderInfo
	}
	e.do(t, "GET", "/api/models", "", &models)
	if len(models.Providers) != 0 {
		t.Fatalf("providers with nothing configured = %+v", models.Providers)
	}
	if code := e.do(t, "PUT", "/api/settings/models/anthropic", `{"api_key":"sk-ant-very-secret"}`, &settings); code != 200 {
		t.Fatalf("save key: %d", code)
	}
	raw := e.raw(t, "GET", "/api/settings/models")
	if strings.Contains(raw, "sk-ant-very-secret") {
		t.Fatal("settings answer contains the key")
	}
	e.do(t, "GET", "/api/settings/models", "", &settings)
	if !settings[0].Configured || settings[0].Source != "app" {
		t.Errorf("anthropic after saving a key = %+v", settings[0])
	}
	e.do(t, "GET", "/api/models", "", &models)
	if len(models.Providers) != 1 || models.Providers[0].Name != "anthropic" {
		t.Errorf("configured providers = %+v", models.Providers)
	}
	var out map[string]string
	if code := e.do(t, "PUT", "/api/settings/models/openai", `{"base_url":"ftp://x"}`, &out); code != 400 {
		t.Errorf("bad base URL: %d %v", code, out)
	}
	if code := e.do(t, "PUT", "/api/settings/models/nope", `{"api_key":"x"}`, &out); code != 404 {
		t.Errorf("unknown provider: %d", code)
	}
	e.do(t, "DELETE", "/api/settings/models/anthropic", "", &settings)
	if settings[0].Configured {
		t.Errorf("anthropic after forgetting = %+v", settings[0])
	}
}

func (e *env) raw(t *testing.T, method, path string) string {
	req, _ := http.NewRequest(method, e.srv.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		b.WriteString(sc.Text())
	}
	return b.String()
}

func TestDeleteAgentStopsItsRuns(t *testing.T) {
	fake := llmtest.New(t)
	e := newEnvWith(t, workspace.Config{LLM: llm.Config{OpenAIKey: "k", OpenAIBaseURL: fake.OpenAIURL()}})
	base := "/api/workspaces/" + e.ws
	var a struct{ ID string }
	e.do(t, "POST", base+"/agents", `{"name":"Busy","box_id":"`+e.box+`"}`, &a)
	fake.Script(llmtest.Reply{Text: "late", Delay: 30 * time.Second})
	var started run.Run
	e.do(t, "POST", base+"/agents/"+a.ID+"/messages", `{"text":"work"}`, &started)
	for len(fake.Requests()) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	began := time.Now()
	if code := e.do(t, "DELETE", base+"/agents/"+a.ID, "", nil); code != 204 || time.Since(began) > 2*time.Second {
		t.Fatalf("delete busy agent: %d after %v", code, time.Since(began))
	}
	var out map[string]string
	if code := e.do(t, "GET", base+"/runs/"+started.ID, "", &out); code != 404 {
		t.Errorf("run of a deleted agent: %d, want 404 (deleted with it)", code)
	}
}

func TestAPIKeysFromTheUI(t *testing.T) {
	e := newEnv(t)
	base := "/api/workspaces/" + e.ws
	var created struct {
		Key    string
		Record struct{ ID, Prefix string }
	}
	if code := e.do(t, "POST", base+"/keys", `{"name":"Cursor"}`, &created); code != 201 || !strings.HasPrefix(created.Key, "rrk_") {
		t.Fatalf("create key: %d %+v", code, created)
	}
	if raw := e.raw(t, "GET", base+"/keys"); strings.Contains(raw, created.Key) || !strings.Contains(raw, created.Record.Prefix) {
		t.Errorf("key list shows the key or misses its prefix: %s", raw)
	}
	var revoked struct {
		RevokedAt *time.Time `json:"revoked_at"`
	}
	if code := e.do(t, "DELETE", base+"/keys/"+created.Record.ID, "", &revoked); code != 200 || revoked.RevokedAt == nil {
		t.Errorf("revoke: %d %+v", code, revoked)
	}
}

func TestInfoGivesTheLocalAddress(t *testing.T) {
	home, err := workspace.Open(context.Background(), workspace.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()
	h := httpapi.New(httpapi.Config{Home: home, Token: token, LocalURL: "http://127.0.0.1:7788", Version: "v1",
		Commit: "abc1234", BuildDate: "2026-12-02T02:00:00Z", MCP: http.NotFoundHandler()})
	req := httptest.NewRequest("GET", "http://127.0.0.1:7788/api/info", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	var info map[string]string
	json.NewDecoder(w.Body).Decode(&info)
	if info["mcp_url"] != "http://127.0.0.1:7788/api/mcp/account" || info["version"] != "v1" ||
		info["commit"] != "abc1234" || info["build_date"] != "2026-12-02T02:00:00Z" {
		t.Errorf("info = %v", info)
	}
}
