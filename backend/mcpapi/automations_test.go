package mcpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/schedule"
	"github.com/rerun-build/rerun-desktop/backend/trigger"
)

type scheduleAnswer struct {
	Schedule schedule.Schedule
	Created  bool
}

func TestScheduleTools(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.key)
	mustCall(t, c, "create_agent", map[string]any{"name": "Writer"}, nil)

	var up scheduleAnswer
	mustCall(t, c, "upsert_schedule", map[string]any{"agent": "@writer", "name": "Digest", "instruction": "Post the digest.",
		"cron": "0 9 * * *", "timezone": "Europe/Berlin", "catch_up_within": "6h"}, &up)
	if !up.Created || up.Schedule.Kind != "cron" || up.Schedule.Description != "Every day at 09:00" || up.Schedule.NextFireAt == nil ||
		time.Duration(up.Schedule.CatchUpWithin) != 6*time.Hour {
		t.Fatalf("create: %+v", up)
	}
	id := up.Schedule.ID
	// The same name changes it; only what is given changes.
	var again scheduleAnswer
	mustCall(t, c, "upsert_schedule", map[string]any{"agent": "@writer", "name": "digest", "cron": "0 10 * * 1-5"}, &again)
	if again.Created || again.Schedule.ID != id || again.Schedule.Description != "Every weekday at 10:00" ||
		again.Schedule.Instruction != "Post the digest." || again.Schedule.Timezone != "Europe/Berlin" {
		t.Fatalf("upsert by name: %+v", again)
	}
	mustCall(t, c, "upsert_schedule", map[string]any{"agent": "@writer", "schedule": id, "name": "Weekday digest", "enabled": false}, &again)
	if again.Schedule.Name != "Weekday digest" || again.Schedule.Enabled || again.Schedule.NextFireAt != nil {
		t.Fatalf("rename and pause by id: %+v", again)
	}
	var once scheduleAnswer
	mustCall(t, c, "upsert_schedule", map[string]any{"agent": "@writer", "name": "New year", "instruction": "Wish everyone a happy new year.",
		"at": "2099-01-01T00:00:00+01:00", "timezone": "Europe/Berlin"}, &once)
	if once.Schedule.Kind != "once" || !strings.HasPrefix(once.Schedule.Description, "Once, on Thu 1 Jan 2099 at 00:00") {
		t.Fatalf("one-off without kind: %+v", once)
	}
	var list struct{ Schedules []schedule.Schedule }
	mustCall(t, c, "list_schedules", map[string]any{"agent": "@writer"}, &list)
	if len(list.Schedules) != 2 || list.Schedules[0].ID != id {
		t.Fatalf("list_schedules = %+v", list)
	}

	var fire schedule.Fire
	mustCall(t, c, "run_schedule_now", map[string]any{"agent": "@writer", "schedule": "Weekday digest"}, &fire)
	if fire.Outcome != "manual" || fire.RunID == "" {
		t.Fatalf("run_schedule_now = %+v", fire)
	}
	var r struct {
		Source    string `json:"source"`
		SessionID string `json:"session_id"`
	}
	mustCall(t, c, "get_run", map[string]any{"run_id": fire.RunID}, &r)
	if r.Source != "schedule" || r.SessionID != up.Schedule.SessionID {
		t.Errorf("the run: %+v, want a schedule run in the schedule's session", r)
	}

	// Two of one name: only the id says which.
	if _, err := e.ws.Schedules.Create(context.Background(), schedule.NewSchedule{AgentID: up.Schedule.AgentID, Name: "New year",
		Instruction: "Again.", Spec: schedule.Spec{Kind: "cron", Cron: "@yearly"}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"ambiguous name", "run_schedule_now", map[string]any{"agent": "@writer", "schedule": "New year"}, "give the id"},
		{"name without agent", "delete_schedule", map[string]any{"schedule": "Weekday digest"}, "the agent and its name"},
		{"no schedule", "run_schedule_now", map[string]any{"agent": "@writer"}, "say which schedule"},
		{"unknown name", "run_schedule_now", map[string]any{"agent": "@writer", "schedule": "Nope"}, `no schedule named "Nope"`},
		{"bad cron", "upsert_schedule", map[string]any{"agent": "@writer", "name": "Bad", "instruction": "x", "cron": "every day"}, "use 5 fields"},
		{"bad zone", "upsert_schedule", map[string]any{"agent": "@writer", "name": "Bad", "instruction": "x", "cron": "@daily", "timezone": "Berlin"}, "unknown time zone"},
		{"a typo of an argument", "upsert_schedule", map[string]any{"agent": "@writer", "name": "Digest", "instrction": "x"}, `did you mean "instruction"?`},
		{"other agent's schedule", "delete_schedule", map[string]any{"agent": "@nobody", "schedule": id}, "no agent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if text, isErr := call(t, c, tc.tool, tc.args); !isErr || !strings.Contains(text, tc.want) {
				t.Errorf("%s(%v): isError=%v %q, want an error containing %q", tc.tool, tc.args, isErr, text, tc.want)
			}
		})
	}

	mustCall(t, c, "delete_schedule", map[string]any{"schedule": id}, nil)
	mustCall(t, c, "list_schedules", map[string]any{"agent": "@writer"}, &list)
	if len(list.Schedules) != 2 {
		t.Errorf("after delete_schedule: %+v, want the two one-offs", list.Schedules)
	}
}

type triggerAnswer struct {
	Trigger struct {
		trigger.Trigger
		URLPrefix string `json:"url_prefix"`
	}
	Created bool
	URL     string
}

// callHook calls a webhook URL as a service would.
func callHook(t *testing.T, url string) int {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(`{"order":1}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

func TestTriggerTools(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.key)
	mustCall(t, c, "create_agent", map[string]any{"name": "Clerk"}, nil)

	var up triggerAnswer
	created, _ := call(t, c, "upsert_trigger", map[string]any{"agent": "@clerk", "name": "Orders", "instruction": "File the order."})
	if err := json.Unmarshal([]byte(created), &up); err != nil {
		t.Fatal(err)
	}
	prefix := e.srv.URL + "/hooks/" + up.Trigger.TokenPrefix
	// The whole URL is the first URL of the answer, with no shortened one.
	if first := created[strings.Index(created, "http"):]; !strings.HasPrefix(first, up.URL) || strings.Contains(created, "…") {
		t.Errorf("upsert_trigger's answer does not lead with the whole URL:\n%s", created)
	}
	if !up.Created || !strings.HasPrefix(up.URL, prefix) || up.Trigger.URLPrefix != "" ||
		up.Trigger.Methods[0] != "POST" || up.Trigger.RateLimit != 60 {
		t.Fatalf("create: %+v", up)
	}
	if got := callHook(t, up.URL); got != 202 {
		t.Fatalf("calling the URL: %d, want 202", got)
	}
	token := strings.TrimPrefix(up.URL, e.srv.URL+"/hooks/")

	var again triggerAnswer
	mustCall(t, c, "upsert_trigger", map[string]any{"agent": "@clerk", "name": "orders", "rate_limit": 600, "methods": []string{"post", "put"}}, &again)
	if again.Created || again.URL != "" || again.Trigger.ID != up.Trigger.ID || again.Trigger.RateLimit != 600 || len(again.Trigger.Methods) != 2 {
		t.Fatalf("upsert by name: %+v, want the same trigger changed and no URL", again)
	}
	text, _ := call(t, c, "list_triggers", map[string]any{"agent": "@clerk"})
	if strings.Contains(text, token) || !strings.Contains(text, up.Trigger.TokenPrefix) {
		t.Errorf("list_triggers shows the whole token, or not its start: %s", text)
	}

	var d trigger.Delivery
	mustCall(t, c, "test_trigger", map[string]any{"agent": "@clerk", "trigger": "Orders", "payload": `{"order":"ord_test"}`}, &d)
	if d.Outcome != "test" || d.RunID == "" || d.Status != 202 {
		t.Fatalf("test_trigger = %+v", d)
	}
	var r struct{ Source, Input string }
	mustCall(t, c, "get_run", map[string]any{"run_id": d.RunID}, &r)
	if r.Source != "trigger" || !strings.Contains(r.Input, `{"order":"ord_test"}`) || !strings.Contains(r.Input, "File the order.") {
		t.Errorf("the test's run: %+v", r)
	}

	var rotated triggerAnswer
	mustCall(t, c, "rotate_trigger_token", map[string]any{"trigger": up.Trigger.ID}, &rotated)
	if rotated.URL == "" || rotated.URL == up.URL || rotated.Trigger.TokenPrefix == up.Trigger.TokenPrefix {
		t.Fatalf("rotate: %+v", rotated)
	}
	if got := callHook(t, up.URL); got != 404 {
		t.Errorf("old URL after rotation: %d, want 404", got)
	}
	if got := callHook(t, rotated.URL); got != 202 {
		t.Errorf("new URL: %d, want 202", got)
	}

	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"signing secret not set", "upsert_trigger", map[string]any{"agent": "@clerk", "name": "Signed", "instruction": "x", "signing_secret_var": "SHOP_SECRET"}, "Variables"},
		{"a secret value is no argument", "upsert_trigger", map[string]any{"agent": "@clerk", "name": "Signed", "instruction": "x", "signing_secret": "whsec_x"}, "looks like a credential"},
		{"too long a grace", "rotate_trigger_token", map[string]any{"trigger": up.Trigger.ID, "grace_seconds": 700000}, "grace_seconds"},
		{"unknown method", "upsert_trigger", map[string]any{"agent": "@clerk", "name": "Orders", "methods": []string{"TRACE"}}, "TRACE"},
		{"no trigger", "test_trigger", map[string]any{"agent": "@clerk"}, "say which trigger"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if text, isErr := call(t, c, tc.tool, tc.args); !isErr || !strings.Contains(text, tc.want) {
				t.Errorf("%s: isError=%v %q, want an error containing %q", tc.tool, isErr, text, tc.want)
			}
		})
	}

	mustCall(t, c, "delete_trigger", map[string]any{"agent": "@clerk", "trigger": "Orders"}, nil)
	var list struct{ Triggers []trigger.Trigger }
	mustCall(t, c, "list_triggers", map[string]any{"agent": "@clerk"}, &list)
	if len(list.Triggers) != 0 {
		t.Errorf("after delete_trigger: %+v", list.Triggers)
	}
	if got := callHook(t, rotated.URL); got != 404 {
		t.Errorf("URL of a deleted trigger: %d, want 404", got)
	}
}
