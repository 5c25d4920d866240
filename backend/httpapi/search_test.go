package httpapi_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/retention"
	"github.com/rerun-build/rerun-desktop/backend/search"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// TestSearchPinRetentionThroughTheAPI searches two chat runs, pins one,
// moves retention's clock past the 90 days a new workspace keeps and
// prunes: the pinned run stays, the other goes.
func TestSearchPinRetentionThroughTheAPI(t *testing.T) {
	fake := llmtest.New(t)
	var ahead atomic.Int64 // how far retention's clock is ahead
	e := newEnvWith(t, workspace.Config{LLM: llm.Config{OpenAIKey: "k", OpenAIBaseURL: fake.OpenAIURL()},
		Retention: retention.Config{Now: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }}})
	base := "/api/workspaces/" + e.ws
	const secretValue = "zq9-hunter-sekrit-value"
	if code := e.do(t, "PUT", base+"/variables/DEPLOY_TOKEN", `{"value":"`+secretValue+`"}`, nil); code != 200 {
		t.Fatalf("set variable = %d", code)
	}
	var a struct{ ID string }
	e.do(t, "POST", base+"/agents", `{"name":"Finder","box_id":"`+e.box+`","capabilities":["files"]}`, &a)
	send := func(text string) string {
		t.Helper()
		fake.Script(llmtest.Text("ok"))
		var r struct{ ID string }
		if code := e.do(t, "POST", base+"/agents/"+a.ID+"/messages", `{"text":"`+text+`","session_id":""}`, &r); code != 202 {
			t.Fatalf("send %q = %d", text, code)
		}
		e.waitRun(t, r.ID)
		return r.ID
	}
	kept := send("reconcile the zebrafish invoice with " + secretValue)
	gone := send("water the pelican garden")

	find := func(query string) (int, search.Result, string) {
		t.Helper()
		var res struct {
			search.Result
			Error string
		}
		code := e.do(t, "GET", base+"/search?"+query, "", &res)
		return code, res.Result, res.Error
	}
	code, res, _ := find("q=zebrafish")
	if code != 200 || len(res.Hits) == 0 || res.Hits[0].RunID != kept || !strings.Contains(res.Hits[0].Snippet, "zebrafish") {
		t.Fatalf("search zebrafish = %d %+v", code, res)
	}
	for _, h := range res.Hits {
		if strings.Contains(h.Snippet, secretValue) {
			t.Errorf("snippet shows the variable's value: %q", h.Snippet)
		}
	}
	if code, res, _ := find("q=" + secretValue); code != 200 || len(res.Hits) != 0 {
		t.Errorf("search for the variable's value = %d %+v, want no hits", code, res.Hits)
	}
	today := time.Now().Format(time.DateOnly)
	for query, want := range map[string]int{
		"q=zebrafish&source=chat":                     1,
		"q=zebrafish&source=api":                      0,
		"q=zebrafish&status=failed":                   0,
		"q=zebrafish&agent=" + a.ID:                   1,
		"q=zebrafish&since=" + today:                  1,
		"q=zebrafish&until=" + today:                  1,
		"q=zebrafish&until=2001-01-01":                0,
		"q=zebrafish&since=2099-01-01T00:00:00Z":      0,
		"q=pelican&limit=1":                           1,
		"q=zebrafish%20-invoice":                      0,
		"q=pelican&since=2001-01-01&until=2099-12-31": 1,
	} {
		code, res, msg := find(query)
		runs := map[string]bool{}
		for _, h := range res.Hits {
			runs[h.RunID] = true
		}
		if code != 200 || len(runs) != want {
			t.Errorf("search %s = %d, %d runs (%s), want %d", query, code, len(runs), msg, want)
		}
	}
	for query, says := range map[string]string{
		"q=x&since=yesterday":                   "since",
		"q=x&until=2026-13-01":                  "until",
		"q=x&since=2026-12-02&until=2026-12-01": "before until",
		"q=x&limit=900":                         "limit",
		"q=x&before=abc":                        "before",
		"q=x&source=fax":                        "source",
	} {
		if code, _, msg := find(query); code != 400 || !strings.Contains(msg, says) {
			t.Errorf("search %s = %d %q, want 400 saying %q", query, code, msg, says)
		}
	}
	if code, _, _ := find("q=x&agent=ag_nope"); code != 404 {
		t.Errorf("search of an unknown agent = %d, want 404", code)
	}

	var pin struct{ Pinned bool }
	if code := e.do(t, "PUT", base+"/runs/"+kept+"/pin", `{"pinned":true}`, &pin); code != 200 || !pin.Pinned {
		t.Fatalf("pin = %d %+v", code, pin)
	}
	if code := e.do(t, "GET", base+"/runs/"+kept+"/pin", "", &pin); code != 200 || !pin.Pinned {
		t.Errorf("read pin = %d %+v", code, pin)
	}
	var detail struct{ Pinned bool }
	if e.do(t, "GET", base+"/runs/"+kept, "", &detail); !detail.Pinned {
		t.Error("run log says pinned false")
	}
	if code := e.do(t, "PUT", base+"/runs/run_nope/pin", `{"pinned":true}`, nil); code != 404 {
		t.Errorf("pin an unknown run = %d, want 404", code)
	}

	var st retention.Settings
	if code := e.do(t, "GET", base+"/retention", "", &st); code != 200 || st != (retention.Settings{KeepDays: 90, TrimDays: 30, TrimChars: 4096}) {
		t.Fatalf("retention of a new workspace = %d %+v, want 90/30/4096", code, st)
	}
	var bad struct{ Error string }
	if code := e.do(t, "PUT", base+"/retention", `{"keep_days":-1,"trim_days":30,"trim_chars":4096}`, &bad); code != 400 || !strings.Contains(bad.Error, "keep runs") {
		t.Errorf("retention keep_days -1 = %d %q, want 400", code, bad.Error)
	}
	if code := e.do(t, "PUT", base+"/retention", `{"keep_days":90,"trim_days":30,"trim_chars":10}`, &bad); code != 400 {
		t.Errorf("retention trim_chars 10 = %d, want 400", code)
	}

	// 100 days on, saving the settings prunes at once.
	ahead.Store(int64(100 * 24 * time.Hour))
	if code := e.do(t, "PUT", base+"/retention", `{"keep_days":90,"trim_days":30,"trim_chars":4096}`, &st); code != 200 || st.KeepDays != 90 {
		t.Fatalf("save retention = %d %+v", code, st)
	}
	deadline := time.Now().Add(waittest.Patience)
	for e.do(t, "GET", base+"/runs/"+gone, "", nil) != 404 {
		if time.Now().After(deadline) {
			t.Fatalf("run %s was not pruned", gone)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code := e.do(t, "GET", base+"/runs/"+kept, "", nil); code != 200 {
		t.Errorf("pinned run after the prune = %d, want 200", code)
	}
	if code, res, _ := find("q=pelican"); code != 200 || len(res.Hits) != 0 {
		t.Errorf("search for the pruned run = %d %d hits", code, len(res.Hits))
	}

	var disk retention.Disk
	if code := e.do(t, "GET", base+"/disk", "", &disk); code != 200 || disk.Total <= 0 || disk.Database <= 0 {
		t.Fatalf("disk = %d %+v", code, disk)
	}
	found := false
	for _, row := range disk.Agents {
		if row.AgentID == a.ID {
			found = row.Handle == "finder" && row.RunCount == 1 && row.Runs > 0
		}
	}
	if !found {
		t.Errorf("disk rows = %+v, want Finder with its one run", disk.Agents)
	}
}
