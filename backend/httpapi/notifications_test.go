package httpapi_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/run"
)

// agent creates an agent in the env's workspace and returns its id.
func (e *env) agent(t *testing.T, name string) string {
	t.Helper()
	var a struct{ ID string }
	if code := e.do(t, "POST", "/api/workspaces/"+e.ws+"/agents", `{"name":"`+name+`","box_id":"`+e.box+`"}`, &a); code != 201 {
		t.Fatalf("create agent: %d", code)
	}
	return a.ID
}

// notify raises a notification the way the runtime does.
func (e *env) notify(t *testing.T, in notify.Input) notify.Notification {
	t.Helper()
	w, _ := e.home.Workspace(e.ws)
	n, err := w.Notify.Notify(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestNotificationsThroughTheAPI(t *testing.T) {
	e := newEnv(t)
	base := "/api/workspaces/" + e.ws
	scout, clerk := e.agent(t, "Scout"), e.agent(t, "Clerk")
	info := e.notify(t, notify.Input{AgentID: scout, Kind: notify.Info, Title: "Found 3 leads"})
	card := e.notify(t, notify.Input{AgentID: scout, PauseID: "pa_1", Kind: notify.Question, Title: "Which one first?", Automated: true})
	e.notify(t, notify.Input{AgentID: clerk, Kind: notify.Error, Title: "Run failed", Automated: true})

	titles := func(path string) (int, string) {
		var list []notify.Notification
		code := e.do(t, "GET", base+path, "", &list)
		var out []string
		for _, n := range list {
			out = append(out, n.Title)
		}
		return code, strings.Join(out, "|")
	}
	for _, tc := range []struct {
		name, path string
		code       int
		want       string
	}{
		{"all newest first", "/notifications", 200, "Run failed|Which one first?|Found 3 leads"},
		{"of one agent", "/notifications?agent_id=" + scout, 200, "Which one first?|Found 3 leads"},
		{"limit", "/notifications?limit=1", 200, "Run failed"},
		{"unknown agent", "/notifications?agent_id=ag_nope", 404, ""},
		{"bad limit", "/notifications?limit=-1", 400, ""},
		{"bad open", "/notifications?open=maybe", 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, got := titles(tc.path)
			if code != tc.code || (tc.code == 200 && got != tc.want) {
				t.Errorf("GET %s = %d %q, want %d %q", tc.path, code, got, tc.code, tc.want)
			}
		})
	}

	var board struct {
		NotificationsOpen int `json:"notifications_open"`
	}
	e.do(t, "GET", base+"/board", "", &board)
	if board.NotificationsOpen != 3 {
		t.Errorf("board notifications_open = %d, want 3 (the pause's counts)", board.NotificationsOpen)
	}

	var dismissed notify.Notification
	if code := e.do(t, "POST", base+"/notifications/"+info.ID+"/dismiss", "", &dismissed); code != 200 || dismissed.HandledAt == nil {
		t.Errorf("dismiss = %d %+v, want 200 and handled", code, dismissed)
	}
	var fail map[string]string
	if code := e.do(t, "POST", base+"/notifications/"+card.ID+"/dismiss", "", &fail); code != 409 || !strings.Contains(fail["error"], "answer the card") {
		t.Errorf("dismiss a pause's notification = %d %v, want 409 saying to answer the card", code, fail)
	}
	if code := e.do(t, "POST", base+"/notifications/nt_nope/dismiss", "", nil); code != 404 {
		t.Errorf("dismiss unknown = %d, want 404", code)
	}
	if _, got := titles("/notifications?open=1"); got != "Run failed|Which one first?" {
		t.Errorf("open = %q", got)
	}

	var count struct{ Dismissed int }
	if code := e.do(t, "POST", base+"/notifications/dismiss", `{"agent_id":"`+scout+`"}`, &count); code != 200 || count.Dismissed != 0 {
		t.Errorf("dismiss all of scout = %d %+v, want 0 (only the pause's is open)", code, count)
	}
	if code := e.do(t, "POST", base+"/notifications/dismiss", "", &count); code != 200 || count.Dismissed != 1 {
		t.Errorf("dismiss all (no body) = %d %+v, want 1", code, count)
	}
	if code := e.do(t, "POST", base+"/notifications/dismiss", `{"agent":"x"}`, nil); code != 400 {
		t.Errorf("dismiss all with an unknown field = %d, want 400", code)
	}
	e.do(t, "GET", base+"/board", "", &board)
	if board.NotificationsOpen != 1 {
		t.Errorf("board notifications_open after dismissing = %d, want 1 (the open pause)", board.NotificationsOpen)
	}
}

func TestDeliverySettingsThroughTheAPI(t *testing.T) {
	e := newEnv(t)
	path := "/api/workspaces/" + e.ws + "/settings/notifications"
	var d notify.Delivery
	if code := e.do(t, "GET", path, "", &d); code != 200 || !d[notify.Question][notify.Mine][notify.OS] || d[notify.Progress][notify.Automated][notify.OS] {
		t.Fatalf("defaults = %d %v", code, d)
	}
	if code := e.do(t, "PUT", path, `{"question":{"mine":{"in_app":true,"os":false}}}`, &d); code != 200 || d[notify.Question][notify.Mine][notify.OS] {
		t.Fatalf("put = %d %v, want question/mine/os off", code, d)
	}
	d = nil
	e.do(t, "GET", path, "", &d)
	if d[notify.Question][notify.Mine][notify.OS] || !d[notify.Question][notify.Automated][notify.OS] || len(d) != len(notify.Kinds) {
		t.Errorf("after put = %v, want question/mine/os off, the rest default", d)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"unknown kind", `{"shout":{}}`, `unknown notification kind "shout"`},
		{"unknown channel", `{"info":{"mine":{"sms":true}}}`, `unknown channel "sms"`},
		{"not a boolean", `{"info":{"mine":{"os":"yes"}}}`, `"info"."mine"."os" in delivery settings must be true or false`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out map[string]string
			if code := e.do(t, "PUT", path, tc.body, &out); code != 400 || !strings.Contains(out["error"], tc.want) {
				t.Errorf("PUT %s = %d %v, want 400 containing %q", tc.body, code, out, tc.want)
			}
		})
	}
}

func TestVariablesThroughTheAPI(t *testing.T) {
	e := newEnv(t)
	base := "/api/workspaces/" + e.ws + "/variables"
	var v struct {
		Name      string
		CreatedAt string `json:"created_at"`
	}
	if code := e.do(t, "PUT", base+"/GITHUB_TOKEN", `{"value":"ghp_first_value"}`, &v); code != 200 || v.Name != "GITHUB_TOKEN" || v.CreatedAt == "" {
		t.Fatalf("set = %d %+v", code, v)
	}
	if code := e.do(t, "PUT", base+"/GITHUB_TOKEN", `{"value":"ghp_second_value"}`, nil); code != 200 {
		t.Fatalf("replace = %d", code)
	}
	var list struct {
		KeyStore     string `json:"key_store"`
		KeyStoreNote string `json:"key_store_note"`
		Variables    []struct{ Name string }
	}
	e.do(t, "GET", base, "", &list)
	if list.KeyStore != "file" || !strings.Contains(list.KeyStoreNote, "secret.key") || len(list.Variables) != 1 || list.Variables[0].Name != "GITHUB_TOKEN" {
		t.Errorf("list = %+v", list)
	}
	w, _ := e.home.Workspace(e.ws)
	if got, _ := w.Variables.Lookup("GITHUB_TOKEN"); got != "ghp_second_value" {
		t.Errorf("value = %q, want the replaced one", got)
	}
	for _, tc := range []struct {
		name, method, path, body string
		code                     int
	}{
		{"lowercase name", "PUT", base + "/github_token", `{"value":"abcdefgh"}`, 400},
		{"short value", "PUT", base + "/SHORT", `{"value":"ab"}`, 400},
		{"no value field", "PUT", base + "/X", `{"val":"abcdefgh"}`, 400},
		{"delete", "DELETE", base + "/GITHUB_TOKEN", "", 204},
		{"delete again", "DELETE", base + "/GITHUB_TOKEN", "", 404},
		{"unknown workspace", "GET", "/api/workspaces/ws_nope/variables", "", 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code := e.do(t, tc.method, tc.path, tc.body, nil); code != tc.code {
				t.Errorf("%s %s = %d, want %d", tc.method, tc.path, code, tc.code)
			}
		})
	}
}

// No route answers a variable's value, whatever it is asked.
func TestNoRouteAnswersAVariableValue(t *testing.T) {
	e := newEnv(t)
	ws := "/api/workspaces/" + e.ws
	const value = "canary-0f9e8d7c6b5a"
	scout := e.agent(t, "Scout")
	e.notify(t, notify.Input{AgentID: scout, Kind: notify.Info, Title: "hello"})
	for _, name := range []string{"CANARY", "ANTHROPIC_API_KEY"} {
		if code := e.do(t, "PUT", ws+"/variables/"+name, `{"value":"`+value+`"}`, nil); code != 200 {
			t.Fatalf("set %s: %d", name, code)
		}
	}
	if code := e.do(t, "PUT", "/api/settings/models/openai", `{"api_key":"`+value+`x"}`, nil); code != 200 {
		t.Fatalf("save a model key: %d", code)
	}
	for _, tc := range []struct{ method, path string }{
		{"PUT", ws + "/variables/CANARY"}, // the answer to a set
		{"GET", ws + "/variables"},
		{"GET", ws + "/notifications"},
		{"GET", ws + "/notifications?open=1&agent_id=" + scout},
		{"GET", ws + "/settings/notifications"},
		{"GET", ws + "/board"},
		{"GET", "/api/models"},
		{"GET", "/api/settings/models"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			var in string
			if tc.method == "PUT" {
				in = `{"value":"` + value + `"}`
			}
			var body json.RawMessage
			if code := e.do(t, tc.method, tc.path, in, &body); code != 200 || strings.Contains(string(body), value) {
				t.Errorf("answer = %d %s, want 200 without the value", code, body)
			}
		})
	}
}

// A key saved in Settings → Models is a variable of the current workspace,
// runs use it, and models.json does not hold it.
func TestModelKeySavedInSettingsIsAVariable(t *testing.T) {
	fake := llmtest.New(t)
	e := newEnv(t)
	const key = "sk-openai-from-settings"
	if code := e.do(t, "PUT", "/api/settings/models/openai", `{"api_key":"`+key+`","base_url":"`+fake.OpenAIURL()+`"}`, nil); code != 200 {
		t.Fatalf("save key: %d", code)
	}
	if raw := e.raw(t, "GET", "/api/workspaces/"+e.ws+"/variables"); !strings.Contains(raw, `"name":"OPENAI_API_KEY"`) {
		t.Errorf("variables = %s, want OPENAI_API_KEY listed", raw)
	}
	saved, err := os.ReadFile(filepath.Join(e.home.DataDir(), "models.json"))
	if err != nil || strings.Contains(string(saved), "api_key") || !strings.Contains(string(saved), fake.OpenAIURL()) {
		t.Errorf("models.json = %s, %v; want the base URL and no key", saved, err)
	}
	// Saving only the key keeps the base URL.
	if code := e.do(t, "PUT", "/api/settings/models/openai", `{"api_key":"`+key+`"}`, nil); code != 200 {
		t.Fatalf("save key again: %d", code)
	}

	scout := e.agent(t, "Scout")
	fake.Script(llmtest.Text("hello"))
	var started run.Run
	if code := e.do(t, "POST", "/api/workspaces/"+e.ws+"/agents/"+scout+"/messages", `{"text":"hi"}`, &started); code != 202 {
		t.Fatalf("send message: %d", code)
	}
	if done := e.waitRun(t, started.ID); done["status"] != "done" {
		t.Fatalf("run = %v", done)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("model requests = %d, want 1", len(reqs))
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+key {
		t.Errorf("authorization = %q, want the saved key", got)
	}
}

// Settings → Variables sets and shows the hosts a variable may be sent to,
// changes them without the value, and refuses a malformed host.
func TestVariableHosts(t *testing.T) {
	e := newEnv(t)
	ws := "/api/workspaces/" + e.ws
	var info struct {
		Name  string   `json:"name"`
		Hosts []string `json:"hosts"`
	}
	if code := e.do(t, "PUT", ws+"/variables/GH_TOKEN", `{"value":"gh-value-0123456789","hosts":["API.github.com","*.githubusercontent.com"]}`, &info); code != 200 ||
		strings.Join(info.Hosts, ",") != "api.github.com,*.githubusercontent.com" {
		t.Fatalf("set with hosts = %d %+v", code, info)
	}
	if code := e.do(t, "PUT", ws+"/variables/GH_TOKEN", `{"hosts":["api.github.com"]}`, &info); code != 200 || strings.Join(info.Hosts, ",") != "api.github.com" {
		t.Fatalf("hosts alone = %d %+v", code, info)
	}
	if code := e.do(t, "PUT", ws+"/variables/GH_TOKEN", `{"value":"gh-value-9876543210"}`, &info); code != 200 || strings.Join(info.Hosts, ",") != "api.github.com" {
		t.Fatalf("value alone = %d %+v, want the hosts kept", code, info)
	}
	raw := e.raw(t, "GET", ws+"/variables")
	if !strings.Contains(raw, `"name":"GH_TOKEN","hosts":["api.github.com"]`) {
		t.Fatalf("list = %s, want GH_TOKEN with its host", raw)
	}
	var fail struct {
		Error string `json:"error"`
	}
	if code := e.do(t, "PUT", ws+"/variables/GH_TOKEN", `{"hosts":["https://api.github.com/"]}`, &fail); code != 400 ||
		!strings.Contains(raw+fail.Error, "write the host alone (here api.github.com)") {
		t.Fatalf("bad host = %d %+v", code, fail)
	}
	if code := e.do(t, "PUT", ws+"/variables/NEW_ONE", `{"hosts":["a.example.com"]}`, &fail); code != 404 || !strings.Contains(fail.Error, "give its value too") {
		t.Fatalf("hosts of a missing variable = %d %+v", code, fail)
	}
}
