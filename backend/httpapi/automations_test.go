package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/rerun-build/rerun-desktop/backend/httpapi"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

func TestSchedulesThroughTheAPI(t *testing.T) {
	e := newEnv(t)
	agentID := e.newAgent(t, "Ada")
	base := "/api/workspaces/" + e.ws

	var sch map[string]any
	if got := e.do(t, "POST", base+"/agents/"+agentID+"/schedules", `{"name":"Digest","instruction":"Post the digest.",
		"kind":"cron","cron":"0 9 * * 1-5","timezone":"Europe/Berlin","catch_up_within":"6h"}`, &sch); got != 201 {
		t.Fatalf("create: %d %v", got, sch)
	}
	id, _ := sch["id"].(string)
	if sch["description"] != "Every weekday at 09:00" || sch["next_fire_at"] == nil || sch["catch_up_within"] != "6h0m0s" ||
		sch["session_id"] == "" || sch["enabled"] != true {
		t.Errorf("created schedule %v", sch)
	}
	var list []map[string]any
	if got := e.do(t, "GET", base+"/agents/"+agentID+"/schedules", "", &list); got != 200 || len(list) != 1 || list[0]["id"] != id {
		t.Fatalf("list: %d %v", got, list)
	}
	if got := e.do(t, "GET", base+"/agents/ag_nope/schedules", "", nil); got != 404 {
		t.Errorf("schedules of an unknown agent: %d, want 404", got)
	}
	var next []string
	if got := e.do(t, "GET", base+"/schedules/"+id+"/next?n=3", "", &next); got != 200 || len(next) != 3 || !strings.HasSuffix(next[0], "09:00:00+01:00") {
		t.Errorf("next: %d %v, want 3 times at 09:00 Berlin time", got, next)
	}

	var patched map[string]any
	if got := e.do(t, "PATCH", base+"/schedules/"+id, `{"enabled":false,"name":"Weekday digest"}`, &patched); got != 200 ||
		patched["enabled"] != false || patched["next_fire_at"] != nil || patched["name"] != "Weekday digest" {
		t.Errorf("pause and rename: %d %v", got, patched)
	}

	var fire map[string]any
	if got := e.do(t, "POST", base+"/schedules/"+id+"/run", "", &fire); got != 200 || fire["outcome"] != "manual" || fire["run_id"] == "" {
		t.Fatalf("run now: %d %v", got, fire)
	}
	var run map[string]any
	if got := e.do(t, "GET", base+"/runs/"+fire["run_id"].(string), "", &run); got != 200 || run["source"] != "schedule" ||
		run["session_id"] != sch["session_id"] || !strings.Contains(run["input"].(string), "Post the digest.") {
		t.Errorf("the run started now: %d source %v session %v input %q; want a schedule run in the schedule's session",
			got, run["source"], run["session_id"], run["input"])
	}
	var history []map[string]any
	if got := e.do(t, "GET", base+"/schedules/"+id+"/history?limit=10", "", &history); got != 200 || len(history) != 1 ||
		history[0]["run_id"] != fire["run_id"] {
		t.Errorf("history: %d %v", got, history)
	}
	if got := e.do(t, "GET", base+"/schedules/"+id+"/history?limit=-1", "", nil); got != 400 {
		t.Errorf("history with a bad limit: %d, want 400", got)
	}

	var board httpapi.Board
	e.do(t, "GET", base+"/board", "", &board)
	if a := board.Automations[agentID]; a.Schedules != 1 || a.Triggers != 0 || a.SchedulesPaused != 1 {
		t.Errorf("board automations %v, want 1 schedule for the agent, paused", board.Automations)
	}
	e.do(t, "PATCH", base+"/schedules/"+id, `{"enabled":true}`, nil)
	e.do(t, "GET", base+"/board", "", &board)
	if a := board.Automations[agentID]; a.Schedules != 1 || a.SchedulesPaused != 0 {
		t.Errorf("board automations after resuming %v, want 1 active schedule", board.Automations)
	}

	if got := e.do(t, "DELETE", base+"/schedules/"+id, "", nil); got != 204 {
		t.Errorf("delete: %d", got)
	}
	if got := e.do(t, "PATCH", base+"/schedules/"+id, `{"name":"x"}`, nil); got != 404 {
		t.Errorf("patch after delete: %d, want 404", got)
	}
	e.do(t, "GET", base+"/agents/"+agentID+"/schedules", "", &list)
	if len(list) != 0 {
		t.Errorf("after delete: %v", list)
	}
}

// Preview answers while a person types: what the schedule does, or 400
// saying what to fix.
func TestSchedulePreview(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name, body string
		status     int
		want       string // in the description or the error
	}{
		{"weekdays", `{"kind":"cron","cron":"30 8 * * mon-fri","timezone":"America/New_York"}`, 200, "Every weekday at 08:30"},
		{"descriptor", `{"kind":"cron","cron":"@daily","timezone":"UTC"}`, 200, "Every day at 00:00"},
		{"bad cron", `{"kind":"cron","cron":"61 * * * *","timezone":"UTC"}`, 400, "use 5 fields"},
		{"six fields", `{"kind":"cron","cron":"0 0 9 * * *","timezone":"UTC"}`, 400, "use 5 fields"},
		{"zone in the expression", `{"kind":"cron","cron":"TZ=Europe/Paris 0 9 * * *","timezone":"UTC"}`, 400, "timezone field"},
		{"unknown zone", `{"kind":"cron","cron":"0 9 * * *","timezone":"Mars/Olympus"}`, 400, `unknown time zone "Mars/Olympus"`},
		{"Local", `{"kind":"cron","cron":"0 9 * * *","timezone":"Local"}`, 400, "IANA name"},
		{"past one-off", `{"kind":"once","at":"2001-01-01T09:00:00Z","timezone":"UTC"}`, 400, "has passed"},
		{"unknown kind", `{"kind":"weekly","timezone":"UTC"}`, 400, `"cron"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out map[string]any
			got := e.do(t, "POST", "/api/schedules/preview", tc.body, &out)
			text, _ := out["description"].(string)
			if got == 400 {
				text, _ = out["error"].(string)
			}
			if got != tc.status || !strings.Contains(text, tc.want) {
				t.Errorf("status %d %v, want %d with %q", got, out, tc.status, tc.want)
			}
			if next, _ := out["next"].([]any); got == 200 && len(next) != 5 {
				t.Errorf("next %v, want 5 times", out["next"])
			}
		})
	}
}

// hook calls a webhook URL as a service would: no UI token.
func hook(t *testing.T, method, url, body string, header map[string]string) (int, map[string]any) {
	t.Helper()
	code, answer := noToken(t, method, url, body, header)
	var out map[string]any
	json.Unmarshal(answer, &out)
	return code, out
}

// noToken sends a request without the UI token, as a service or a browser
// would; header may set Host.
func noToken(t *testing.T, method, url, body string, header map[string]string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(res.Body)
	return res.StatusCode, answer
}

type created struct {
	Trigger map[string]any `json:"trigger"`
	URL     string         `json:"url"`
}

func TestTriggersThroughTheAPI(t *testing.T) {
	e := newEnv(t)
	agentID := e.newAgent(t, "Ada")
	base := "/api/workspaces/" + e.ws

	var c created
	if got := e.do(t, "POST", base+"/agents/"+agentID+"/triggers", `{"name":"New order","instruction":"Add the order to the sheet.","rate_limit":1000}`, &c); got != 201 {
		t.Fatalf("create: %d %v", got, c)
	}
	id, _ := c.Trigger["id"].(string)
	prefix, _ := c.Trigger["token_prefix"].(string)
	if !strings.HasPrefix(c.URL, e.srv.URL+"/hooks/rrh_") || !strings.HasPrefix(c.URL, e.srv.URL+"/hooks/"+prefix) ||
		c.Trigger["url_prefix"] != e.srv.URL+"/hooks/"+prefix+"…" {
		t.Fatalf("url %q prefix %q url_prefix %v", c.URL, prefix, c.Trigger["url_prefix"])
	}
	token := strings.TrimPrefix(c.URL, e.srv.URL+"/hooks/")
	var list []map[string]any
	if got := e.do(t, "GET", base+"/agents/"+agentID+"/triggers", "", &list); got != 200 || len(list) != 1 {
		t.Fatalf("list: %d %v", got, list)
	}
	if b, _ := json.Marshal(list); strings.Contains(string(b), token) {
		t.Errorf("the list shows the whole token: %s", b)
	}

	// A service calls it: no UI token, its own Origin (or none).
	status, out := hook(t, "POST", c.URL+"?source=shop", `{"order":"ord_42","total":99}`, map[string]string{
		"Content-Type": "application/json", "Origin": "https://shop.example", "webhook-id": "msg_1"})
	if status != 202 || out["run_id"] == "" || out["delivery_id"] == "" {
		t.Fatalf("call: %d %v, want 202 with the run", status, out)
	}
	var run map[string]any
	e.do(t, "GET", base+"/runs/"+out["run_id"].(string), "", &run)
	input, _ := run["input"].(string)
	if run["source"] != "trigger" || run["session_id"] != c.Trigger["session_id"] || !strings.Contains(input, `{"order":"ord_42","total":99}`) ||
		!strings.Contains(input, "Add the order to the sheet.") || !strings.Contains(input, "source = shop") {
		t.Errorf("run %v source %v: want a trigger run in the trigger's session with the payload, query and instruction; input %q",
			run["id"], run["source"], input)
	}
	if status, again := hook(t, "POST", c.URL, `{}`, map[string]string{"webhook-id": "msg_1"}); status != 200 || again["run_id"] != out["run_id"] {
		t.Errorf("repeated webhook-id: %d %v, want 200 with the first run", status, again)
	}
	for _, tc := range []struct {
		name   string
		url    string
		method string
		body   string
		header map[string]string
		want   int
	}{
		{"foreign Host", c.URL, "POST", "{}", map[string]string{"Host": "evil.example"}, 403},
		{"rebinding Host with port", c.URL, "POST", "{}", map[string]string{"Host": "attacker.com:7777"}, 403},
		{"method not allowed", c.URL, "PUT", "{}", nil, 405},
		{"body over 1 MiB", c.URL, "POST", strings.Repeat("x", 1<<20+1), nil, 413},
		{"unknown token", e.srv.URL + "/hooks/rrh_unknown", "POST", "{}", nil, 404},
		{"no token", e.srv.URL + "/hooks/", "POST", "{}", nil, 404},
		{"the UI token is no trigger token", e.srv.URL + "/hooks/" + token + "x", "POST", "{}", map[string]string{"Authorization": "Bearer " + token}, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if status, out := hook(t, tc.method, tc.url, tc.body, tc.header); status != tc.want {
				t.Errorf("status %d %v, want %d", status, out, tc.want)
			}
		})
	}

	var d map[string]any
	if got := e.do(t, "POST", base+"/triggers/"+id+"/test", `{"payload":{"order":"ord_test"}}`, &d); got != 200 || d["outcome"] != "test" || d["run_id"] == "" {
		t.Fatalf("test: %d %v", got, d)
	}
	e.do(t, "GET", base+"/runs/"+d["run_id"].(string), "", &run)
	if input, _ := run["input"].(string); !strings.Contains(input, `{"order":"ord_test"}`) || !strings.Contains(input, "Test call") {
		t.Errorf("test run input %q, want the sample payload", input)
	}

	var rotated created
	if got := e.do(t, "POST", base+"/triggers/"+id+"/rotate", `{}`, &rotated); got != 200 || rotated.URL == c.URL || rotated.URL == "" {
		t.Fatalf("rotate: %d %v", got, rotated)
	}
	if status, _ := hook(t, "POST", c.URL, "{}", nil); status != 404 {
		t.Errorf("old URL after rotation: %d, want 404", status)
	}
	if status, _ := hook(t, "POST", rotated.URL, "{}", nil); status != 202 {
		t.Errorf("new URL: %d, want 202", status)
	}
	if got := e.do(t, "POST", base+"/triggers/"+id+"/rotate", `{"grace_seconds":-1}`, nil); got != 400 {
		t.Errorf("negative grace: %d, want 400", got)
	}

	var patched map[string]any
	if got := e.do(t, "PATCH", base+"/triggers/"+id, `{"enabled":false}`, &patched); got != 200 || patched["enabled"] != false {
		t.Errorf("pause: %d %v", got, patched)
	}
	if status, _ := hook(t, "POST", rotated.URL, "{}", nil); status != 503 {
		t.Errorf("paused trigger: %d, want 503", status)
	}

	var deliveries []map[string]any
	if got := e.do(t, "GET", base+"/triggers/"+id+"/deliveries?limit=50", "", &deliveries); got != 200 {
		t.Fatalf("deliveries: %d", got)
	}
	outcomes := []string{}
	for _, d := range deliveries {
		outcomes = append(outcomes, d["outcome"].(string))
	}
	// Newest first: paused, the new URL, the test, 413, 405, the call.
	if want := "rejected accepted test rejected rejected accepted"; strings.Join(outcomes, " ") != want {
		t.Errorf("deliveries %v, want %s", outcomes, want)
	}

	var board httpapi.Board
	e.do(t, "GET", base+"/board", "", &board)
	if a := board.Automations[agentID]; a.Triggers != 1 || a.Schedules != 0 || a.TriggersPaused != 1 {
		t.Errorf("board automations %v, want 1 trigger, paused", board.Automations)
	}
	if got := e.do(t, "DELETE", base+"/triggers/"+id, "", nil); got != 204 {
		t.Errorf("delete: %d", got)
	}
	if status, _ := hook(t, "POST", rotated.URL, "{}", nil); status != 404 {
		t.Errorf("deleted trigger: %d, want 404", status)
	}
}

// logBuffer collects log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Refused and failed webhook calls are logged with the token's first
// characters only, and the whole URL is nowhere in the logs.
func TestHookLogsNeverShowTheToken(t *testing.T) {
	logs := &logBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	home, err := workspace.Open(context.Background(), workspace.Config{DataDir: t.TempDir(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Home: home, Token: token, Logger: home.Logger(),
		Assets: fstest.MapFS{"index.html": {Data: []byte("<title>Rerun</title>")}}}))
	defer srv.Close()
	e := &env{srv: srv, home: home, ws: home.Current()}
	w, _ := home.Workspace(e.ws)
	boxes, _ := w.Boxes.List(context.Background())
	e.box = boxes[0].ID
	agentID := e.newAgent(t, "Ada")
	var c created
	e.do(t, "POST", "/api/workspaces/"+e.ws+"/agents/"+agentID+"/triggers", `{"name":"Orders","instruction":"File it."}`, &c)
	token := strings.TrimPrefix(c.URL, srv.URL+"/hooks/")
	hook(t, "POST", c.URL, "{}", map[string]string{"Host": "evil.example"})
	hook(t, "GET", c.URL, "", nil)
	hook(t, "POST", c.URL, "{}", nil)
	hook(t, "POST", srv.URL+"/hooks/"+token+"zz", "{}", nil)
	out := logs.String()
	if !strings.Contains(out, "refused foreign Host") || !strings.Contains(out, token[:10]) {
		t.Fatalf("logs do not name the refused call by its token's start:\n%s", out)
	}
	if strings.Contains(out, token[:20]) {
		t.Errorf("logs show more than the token's first characters:\n%s", out)
	}
}
