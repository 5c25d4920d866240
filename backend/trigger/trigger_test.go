package trigger_test

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/trigger"
)

func TestCreateStoresOnlyAHash(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	token, tr := e.create(trigger.NewTrigger{Name: "Orders"})
	if !regexp.MustCompile(`^rrh_[a-z2-7]{52}$`).MatchString(token) {
		t.Errorf("token %q: want rrh_ and 52 base32 characters (256 bits)", token)
	}
	if tr.TokenPrefix != token[:10] || tr.RateLimit != 60 || strings.Join(tr.Methods, ",") != "POST" || !tr.Enabled {
		t.Errorf("trigger %+v: want prefix %q, 60/min, POST, enabled", tr, token[:10])
	}
	sess, err := e.runs.Session(ctx, tr.SessionID)
	if err != nil || sess.Kind != run.SourceTrigger {
		t.Errorf("session %+v %v, want the trigger's own session", sess, err)
	}
	var n int
	e.db.QueryRow(`SELECT count(*) FROM trigger_tokens WHERE hash = ? OR prefix = ?`, token, token).Scan(&n)
	if n != 0 {
		t.Error("the token itself is stored")
	}
	_, other := e.create(trigger.NewTrigger{Name: "Other"})
	if other.TokenPrefix == tr.TokenPrefix {
		t.Error("two triggers got the same token")
	}
	if list, _ := e.svc.List(ctx, e.agent); len(list) != 2 {
		t.Errorf("list = %d triggers, want 2", len(list))
	}

	for name, in := range map[string]trigger.NewTrigger{
		"no name":            {AgentID: e.agent, Instruction: "x"},
		"no instruction":     {AgentID: e.agent, Name: "n"},
		"unknown method":     {AgentID: e.agent, Name: "n", Instruction: "x", Methods: []string{"TRACE"}},
		"rate limit":         {AgentID: e.agent, Name: "n", Instruction: "x", RateLimit: -1},
		"bad variable":       {AgentID: e.agent, Name: "n", Instruction: "x", SigningSecretVar: "my secret"},
		"variable not set":   {AgentID: e.agent, Name: "n", Instruction: "x", SigningSecretVar: "STRIPE_SECRET"},
		"agent not provided": {Name: "n", Instruction: "x"},
	} {
		if _, _, err := e.svc.Create(ctx, in); !errors.Is(err, fault.ErrInvalid) {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}
	tr, err = e.svc.Update(ctx, tr.ID, trigger.Update{Methods: &[]string{"post", "put", "POST"}, Name: ptr("Orders v2")})
	if err != nil || strings.Join(tr.Methods, ",") != "POST,PUT" || tr.Name != "Orders v2" {
		t.Errorf("update: %+v %v, want POST,PUT and the new name", tr, err)
	}
	if err := e.svc.Delete(ctx, tr.ID); err != nil {
		t.Fatal(err)
	}
	if r := e.call("POST", token, "{}"); r.status != http.StatusNotFound {
		t.Errorf("deleted trigger answered %d, want 404", r.status)
	}
}

// The call's payload reaches the agent beside the instruction, without
// credentials, and the run is in the database when the 202 arrives.
func TestIntakeHandsOverPayload(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	token, tr := e.create(trigger.NewTrigger{Name: "Orders", Instruction: "Add the order to the sheet."})
	body := `{"order":42,"customer":"Zoë"}`
	r := e.callURL("POST", e.srv.URL+"/hooks/"+token+"?source=shop&api_key=hunter2", body,
		"Content-Type", "application/json", "User-Agent", "Shop/1.0", "Authorization", "Bearer sekrit",
		"Cookie", "session=abc", "X-Shop-Signature", "deadbeef", "X-Request-Id", "req-7")
	if r.status != http.StatusAccepted || r.str("run_id") == "" || r.str("delivery_id") == "" {
		t.Fatalf("answer %d %v, want 202 with run_id and delivery_id", r.status, r.body)
	}

	// Durability: another connection (as after a crash) sees the queued run.
	db2, err := store.Open(ctx, e.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	var status, input, source, session string
	if err := db2.QueryRow(`SELECT status, input, source, session_id FROM runs WHERE id = ?`, r.str("run_id")).Scan(&status, &input, &source, &session); err != nil {
		t.Fatalf("the run is not in the database after the 202: %v", err)
	}
	if status != "queued" || source != "trigger" || session != tr.SessionID {
		t.Errorf("run status %q source %q session %q, want queued trigger run in %s", status, source, session, tr.SessionID)
	}
	for _, want := range []string{"Webhook trigger “Orders”", r.str("delivery_id"), "Add the order to the sheet.", "Method: POST",
		"Content-Type: application/json", "source = shop", "User-Agent: Shop/1.0", "X-Request-Id: req-7", body} {
		if !strings.Contains(input, want) {
			t.Errorf("run input lacks %q:\n%s", want, input)
		}
	}
	for _, secret := range []string{"sekrit", "session=abc", "deadbeef", "hunter2", token} {
		if strings.Contains(input, secret) {
			t.Errorf("run input shows the credential %q", secret)
		}
	}
	d := e.deliveries(tr.ID)
	if len(d) != 1 || d[0].Outcome != trigger.OutcomeAccepted || d[0].Status != 202 || d[0].RunID != r.str("run_id") || d[0].Size != len(body) {
		t.Errorf("deliveries %+v, want one accepted with its run", d)
	}

	r = e.call("POST", token, "\x89PNG\x00\x01\x02", "Content-Type", "image/png")
	run, _ := e.runs.Get(ctx, r.str("run_id"))
	if r.status != http.StatusAccepted || !strings.Contains(run.Input, "Body: 7 bytes of binary data (not shown)") {
		t.Errorf("binary body: %d, input %q; want a note with its size", r.status, run.Input)
	}

	if l := e.logs.String(); strings.Contains(l, token) || !strings.Contains(l, tr.TokenPrefix) {
		t.Errorf("logs show the token (or not even its prefix):\n%s", l)
	}
}

func TestIntakeRefusals(t *testing.T) {
	e := newEnv(t)
	token, tr := e.create(trigger.NewTrigger{Methods: []string{"POST", "PUT"}})
	_, paused := e.create(trigger.NewTrigger{Name: "paused", Enabled: ptr(false)})
	pausedToken, _, _ := e.svc.Rotate(context.Background(), paused.ID, 0)
	exactly := strings.Repeat("a", 1<<20)
	cases := []struct {
		name, method, token, body string
		want                      int
		recorded                  bool
	}{
		{"unknown token", "POST", "rrh_" + strings.Repeat("a", 52), "{}", 404, false},
		{"not a token", "POST", "hello", "{}", 404, false},
		{"method not allowed", "GET", token, "", 405, true},
		{"body of 1 MiB", "PUT", token, exactly, 202, true},
		{"body over 1 MiB", "POST", token, exactly + "a", 413, true},
		{"paused", "POST", pausedToken, "{}", 503, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(e.deliveries(tr.ID)) + len(e.deliveries(paused.ID))
			r := e.call(tc.method, tc.token, tc.body)
			if r.status != tc.want || (tc.want != 202 && r.str("error") == "") {
				t.Fatalf("got %d %v, want %d with an error message", r.status, r.body, tc.want)
			}
			if tc.want == 405 && r.header.Get("Allow") != "POST, PUT" {
				t.Errorf("Allow = %q, want \"POST, PUT\"", r.header.Get("Allow"))
			}
			after := len(e.deliveries(tr.ID)) + len(e.deliveries(paused.ID))
			if got := after - before; tc.recorded && got != 1 || !tc.recorded && got != 0 {
				t.Errorf("%d deliveries recorded, want recorded=%v", got, tc.recorded)
			}
		})
	}
	d := e.deliveries(tr.ID)[0] // newest: the 413
	if d.Status != 413 || d.Outcome != trigger.OutcomeRejected || d.Error == "" || d.RunID != "" {
		t.Errorf("413 delivery %+v, want rejected with a reason", d)
	}
}

// A change made behind the service's back (a cascade, another process)
// reaches the calls though their lookups are cached: an accepted call is
// checked against the trigger's row when it commits, and a refusal rests
// on a lookup at most a second old.
func TestIntakeSeesChangesMadeElsewhere(t *testing.T) {
	e := newEnv(t)
	token, tr := e.create(trigger.NewTrigger{})
	if r := e.call("POST", token, `{}`); r.status != 202 {
		t.Fatalf("first call: %d %v", r.status, r.body)
	}
	if _, err := e.db.Exec(`UPDATE triggers SET enabled = 0, updated_at = ? WHERE id = ?`,
		store.FormatTime(e.clock.Now().Add(time.Second)), tr.ID); err != nil {
		t.Fatal(err)
	}
	if r := e.call("POST", token, `{}`); r.status != 503 {
		t.Errorf("paused elsewhere: %d %v, want 503", r.status, r.body)
	}
	if n := len(e.sessionRuns(tr)); n != 1 {
		t.Errorf("%d runs, want only the first call's", n)
	}
	if _, err := e.db.Exec(`DELETE FROM triggers WHERE id = ?`, tr.ID); err != nil {
		t.Fatal(err)
	}
	e.clock.Add(2 * time.Second)
	if r := e.call("POST", token, `{}`); r.status != 404 {
		t.Errorf("deleted elsewhere: %d %v, want 404", r.status, r.body)
	}
}

func TestIdempotency(t *testing.T) {
	e := newEnv(t)
	token, tr := e.create(trigger.NewTrigger{RateLimit: 1000})
	first := e.call("POST", token, `{"n":1}`, "webhook-id", "msg_1")
	again := e.call("POST", token, `{"n":1}`, "webhook-id", "msg_1")
	if first.status != 202 || again.status != 200 || again.body["duplicate"] != true || again.str("run_id") != first.str("run_id") {
		t.Fatalf("first %d %v, again %d %v; want 202 then 200 duplicate with the same run", first.status, first.body, again.status, again.body)
	}
	other := e.call("POST", token, `{}`, "Idempotency-Key", "k-1")
	otherAgain := e.call("POST", token, `{}`, "Idempotency-Key", "k-1")
	if other.status != 202 || otherAgain.str("run_id") != other.str("run_id") {
		t.Errorf("Idempotency-Key: %v then %v, want the same run", other.body, otherAgain.body)
	}

	// Twenty at once with one key: one run, everyone told its id.
	var wg sync.WaitGroup
	answers := make([]response, 20)
	for i := range answers {
		wg.Add(1)
		go func() { defer wg.Done(); answers[i] = e.call("POST", token, `{"n":2}`, "webhook-id", "msg_2") }()
	}
	wg.Wait()
	ids := map[string]int{}
	accepted := 0
	for _, a := range answers {
		ids[a.str("run_id")]++
		if a.status == 202 {
			accepted++
		}
	}
	if len(ids) != 1 || accepted != 1 {
		t.Errorf("concurrent calls: run ids %v, %d answered 202; want one run id, one 202", ids, accepted)
	}
	if n := len(e.sessionRuns(tr)); n != 3 {
		t.Errorf("%d runs, want 3 (msg_1, k-1, msg_2)", n)
	}

	// Keys seen before and new ones at once (calls that share a commit
	// look their keys up together): each seen key gets its own first run,
	// each new key a run of its own.
	seen := map[string]string{"msg_1": first.str("run_id"), "k-1": other.str("run_id"), "msg_2": answers[0].str("run_id")}
	mixed := []string{"msg_1", "new_1", "k-1", "new_2", "msg_2", "new_3"}
	got := make([]response, len(mixed))
	for i, key := range mixed {
		wg.Add(1)
		go func() { defer wg.Done(); got[i] = e.call("POST", token, `{"n":3}`, "webhook-id", key) }()
	}
	wg.Wait()
	runs := map[string]bool{}
	for i, key := range mixed {
		switch want, old := seen[key]; {
		case old && (got[i].status != 200 || got[i].str("run_id") != want):
			t.Errorf("seen key %s: %d %v, want 200 with run %s", key, got[i].status, got[i].body, want)
		case !old && got[i].status != 202:
			t.Errorf("new key %s: %d %v, want 202", key, got[i].status, got[i].body)
		}
		runs[got[i].str("run_id")] = true
	}
	if len(runs) != len(mixed) {
		t.Errorf("run ids %v: want %d different ones", runs, len(mixed))
	}
	if n := len(e.sessionRuns(tr)); n != 6 {
		t.Errorf("%d runs, want 6 (3 before, new_1, new_2, new_3)", n)
	}

	e.clock.Add(24*time.Hour + time.Second)
	late := e.call("POST", token, `{"n":1}`, "webhook-id", "msg_1")
	if late.status != 202 || late.str("run_id") == first.str("run_id") {
		t.Errorf("after 24 h: %d %v, want a new run", late.status, late.body)
	}
}

// signed returns the Standard Webhooks headers for body, signed by the
// reference library with secret at ts.
func signed(t *testing.T, secret, id string, ts time.Time, body string) []string {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := wh.Sign(id, ts, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return []string{"webhook-id", id, "webhook-timestamp", strconv.FormatInt(ts.Unix(), 10), "webhook-signature", sig}
}

func TestSignature(t *testing.T) {
	e := newEnv(t)
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	e.vars.set("SHOP_SECRET", secret)
	token, tr := e.create(trigger.NewTrigger{SigningSecretVar: "${SHOP_SECRET}", RateLimit: 1000})
	if tr.SigningSecretVar != "SHOP_SECRET" {
		t.Fatalf("secret variable %q, want SHOP_SECRET", tr.SigningSecretVar)
	}
	now := e.clock.Now()
	body := `{"type":"order.created"}`
	const otherSecret = "whsec_c2VjcmV0LW9mLXNvbWVvbmUtZWxzZQ=="
	// A sender rotating its secret signs with both, space-separated.
	several := signed(t, secret, "msg_2", now, body)
	several[5] = signed(t, otherSecret, "msg_2", now, body)[5] + " v1a,c29tZXRoaW5n " + several[5]
	cases := []struct {
		name    string
		body    string
		headers []string
		want    int
		reason  string
	}{
		{"valid", body, signed(t, secret, "msg_1", now, body), 202, ""},
		{"valid among several", body, several, 202, ""},
		{"unsigned", body, nil, 401, "required"},
		{"wrong secret", body, signed(t, otherSecret, "msg_3", now, body), 401, "no webhook-signature matches"},
		{"tampered body", `{"type":"order.refunded"}`, signed(t, secret, "msg_4", now, body), 401, "no webhook-signature matches"},
		{"expired", body, signed(t, secret, "msg_5", now.Add(-6*time.Minute), body), 401, "too far from now"},
		{"from the future", body, signed(t, secret, "msg_6", now.Add(6*time.Minute), body), 401, "too far from now"},
		{"within the window", body, signed(t, secret, "msg_7", now.Add(-4*time.Minute), body), 202, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.call("POST", token, tc.body, tc.headers...)
			if r.status != tc.want {
				t.Fatalf("got %d %v, want %d", r.status, r.body, tc.want)
			}
			if tc.want == 401 {
				d := e.deliveries(tr.ID)[0]
				if d.Status != 401 || !strings.Contains(d.Error, tc.reason) {
					t.Errorf("delivery %+v, want 401 recorded with %q", d, tc.reason)
				}
			}
		})
	}
	if n := len(e.sessionRuns(tr)); n != 3 {
		t.Errorf("%d runs, want 3 (the valid calls)", n)
	}

	// The secret removed from the variables: refused, and the owner told why.
	e.vars.unset("SHOP_SECRET")
	if r := e.call("POST", token, body, signed(t, secret, "msg_8", now, body)...); r.status != 401 {
		t.Errorf("without the variable: %d, want 401", r.status)
	}
	if d := e.deliveries(tr.ID)[0]; !strings.Contains(d.Error, "SHOP_SECRET") || !strings.Contains(d.Error, "not set") {
		t.Errorf("delivery error %q, want it to name the missing variable", d.Error)
	}
}

func TestRotation(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	old, tr := e.create(trigger.NewTrigger{RateLimit: 1000})
	fresh, tr2, err := e.svc.Rotate(ctx, tr.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if fresh == old || tr2.TokenPrefix != fresh[:10] || tr2.RotatedAt == nil || tr2.OldTokenExpiresAt != nil {
		t.Errorf("rotated %+v, want a new token and prefix, no grace", tr2)
	}
	if r := e.call("POST", old, "{}"); r.status != 404 {
		t.Errorf("old URL answered %d at once, want 404", r.status)
	}
	if r := e.call("POST", fresh, "{}"); r.status != 202 {
		t.Errorf("new URL answered %d, want 202", r.status)
	}

	newest, tr3, err := e.svc.Rotate(ctx, tr.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if tr3.OldTokenExpiresAt == nil || !tr3.OldTokenExpiresAt.Equal(e.clock.Now().Add(time.Hour)) {
		t.Errorf("old token expires %v, want in 1 h", tr3.OldTokenExpiresAt)
	}
	for _, tok := range []string{fresh, newest} {
		if r := e.call("POST", tok, "{}"); r.status != 202 {
			t.Errorf("during the grace %s… answered %d, want 202", tok[:10], r.status)
		}
	}
	e.clock.Add(time.Hour + time.Second)
	if r := e.call("POST", fresh, "{}"); r.status != 404 {
		t.Errorf("after the grace the old URL answered %d, want 404", r.status)
	}
	if r := e.call("POST", newest, "{}"); r.status != 202 {
		t.Errorf("after the grace the new URL answered %d, want 202", r.status)
	}
	if _, _, err := e.svc.Rotate(ctx, tr.ID, 30*24*time.Hour); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("a 30-day grace: %v, want invalid", err)
	}
	if l := e.logs.String(); strings.Contains(l, old) || strings.Contains(l, fresh) || strings.Contains(l, newest) {
		t.Error("logs show a full token")
	}
}

func TestRateLimit(t *testing.T) {
	e := newEnv(t)
	token, tr := e.create(trigger.NewTrigger{RateLimit: 3})
	for i := range 3 {
		if r := e.call("POST", token, "{}"); r.status != 202 {
			t.Fatalf("call %d: %d, want 202", i+1, r.status)
		}
	}
	r := e.call("POST", token, "{}")
	retry, _ := strconv.Atoi(r.header.Get("Retry-After"))
	if r.status != 429 || retry < 1 || retry > 20 {
		t.Fatalf("4th call: %d Retry-After %q, want 429 within 20 s (3 a minute)", r.status, r.header.Get("Retry-After"))
	}
	for range 5 {
		e.call("POST", token, "{}")
	}
	refused := 0
	for _, d := range e.deliveries(tr.ID) {
		if d.Status == 429 {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("%d refusals recorded, want 1 (at most one a minute)", refused)
	}
	e.clock.Add(time.Duration(retry) * time.Second)
	if r := e.call("POST", token, "{}"); r.status != 202 {
		t.Errorf("after Retry-After: %d, want 202", r.status)
	}
}

func TestTestCall(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	_, tr := e.create(trigger.NewTrigger{Name: "Orders", Enabled: ptr(false), SigningSecretVar: ""})
	d, err := e.svc.Test(ctx, tr.ID, `{"sample":true}`, "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.runs.Get(ctx, d.RunID)
	if err != nil || d.Outcome != trigger.OutcomeTest || r.SessionID != tr.SessionID {
		t.Fatalf("test delivery %+v run %+v %v, want a test run in the trigger's session", d, r, err)
	}
	for _, want := range []string{"Test call of webhook trigger “Orders”", `{"sample":true}`, "Content-Type: application/json"} {
		if !strings.Contains(r.Input, want) {
			t.Errorf("input lacks %q:\n%s", want, r.Input)
		}
	}
	if list := e.deliveries(tr.ID); len(list) != 1 || list[0].Outcome != trigger.OutcomeTest {
		t.Errorf("deliveries %+v, want the test", list)
	}
}

// A call recorded without its run (by a process that queued runs apart from
// their delivery and was killed in between): the caller got no 202. Its retry with the same key (once the claim is old)
// queues one run; without a key, Serve marks it failed, or links the run
// that was queued after all.
func TestInterruptedDelivery(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	token, tr := e.create(trigger.NewTrigger{RateLimit: 1000})
	keyed, err := e.svc.ClaimOnly(ctx, tr.ID, "msg_9")
	if err != nil {
		t.Fatal(err)
	}
	bare, _ := e.svc.ClaimOnly(ctx, tr.ID, "")
	queued, _ := e.svc.ClaimOnly(ctx, tr.ID, "")
	// The third one's run was queued just before the process died.
	queuedRun, err := e.runs.Start(ctx, e.agent, tr.SessionID, run.SourceTrigger, "[… · "+queued+"]\nhello", run.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	runID := queuedRun.ID

	restarted := e.service(e.db)
	e.use(restarted)
	if r := e.call("POST", token, "{}", "webhook-id", "msg_9"); r.status != http.StatusConflict {
		t.Errorf("retry at once: %d, want 409 (the claim may still be live)", r.status)
	}
	e.clock.Add(3 * time.Minute)
	r := e.call("POST", token, `{"retried":true}`, "webhook-id", "msg_9")
	if r.status != 200 || r.str("delivery_id") != keyed || r.str("run_id") == "" {
		t.Fatalf("retry later: %d %v, want the first delivery with a run", r.status, r.body)
	}
	if err := restarted.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	byID := map[string]trigger.Delivery{}
	for _, d := range e.deliveries(tr.ID) {
		byID[d.ID] = d
	}
	if d := byID[bare]; d.Outcome != trigger.OutcomeFailed || !strings.Contains(d.Error, "restart") {
		t.Errorf("unkeyed interrupted delivery %+v, want failed, saying why", d)
	}
	if d := byID[queued]; d.RunID != runID || d.Outcome != trigger.OutcomeAccepted {
		t.Errorf("delivery whose run was queued: %+v, want linked to %s", d, runID)
	}
	if n := len(e.sessionRuns(tr)); n != 2 {
		t.Errorf("%d runs, want 2 (the retried one, the one queued before the crash)", n)
	}
}

func ptr[T any](v T) *T { return &v }
