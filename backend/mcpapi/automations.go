package mcpapi

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/schedule"
	"github.com/rerun-build/rerun-desktop/backend/trigger"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// TriggerView is a trigger as the tools show it: with the start of its URL.
// The whole URL is shown once, by upsert_trigger when it creates the
// trigger and by rotate_trigger_token.
type TriggerView struct {
	trigger.Trigger
	URLPrefix string `json:"url_prefix,omitempty"`
	// PublicURLPrefix starts its public URL, through the workspace's
	// relay, when the workspace is linked to one.
	PublicURLPrefix string `json:"public_url_prefix,omitempty"`
}

func toTrigger(ctx context.Context, w *workspace.Workspace, t trigger.Trigger) TriggerView {
	v := TriggerView{Trigger: t, URLPrefix: hookURL(ctx, t.TokenPrefix) + "…"}
	if base := w.Relay.HookBase(); base != "" {
		v.PublicURLPrefix = base + t.TokenPrefix + "…"
	}
	return v
}

// TokenAnswer is what upsert_trigger and rotate_trigger_token answer when
// they make a token: the whole URL first (its only showing), so a client or
// model that takes the first URL it reads takes the right one; the trigger
// then carries no shortened prefix.
type TokenAnswer struct {
	URL string `json:"url"`
	// PublicURL is the URL through the workspace's relay, when linked.
	PublicURL string      `json:"public_url,omitempty"`
	Created   *bool       `json:"created,omitempty"`
	Trigger   TriggerView `json:"trigger"`
}

func tokenAnswer(ctx context.Context, w *workspace.Workspace, t trigger.Trigger, token string, created *bool) TokenAnswer {
	v := toTrigger(ctx, w, t)
	v.URLPrefix, v.PublicURLPrefix = "", ""
	out := TokenAnswer{URL: hookURL(ctx, token), Created: created, Trigger: v}
	if base := w.Relay.HookBase(); base != "" {
		out.PublicURL = base + token
	}
	return out
}

// hookURL is the URL of a trigger token on this server (a path when the
// server's address is not known).
func hookURL(ctx context.Context, token string) string {
	return localURL(ctx) + trigger.PathPrefix + token
}

const (
	scheduleRef = `"schedule":{"type":"string","description":"The schedule's id (sch_…), or its name among the agent's schedules (then agent is needed)."}`
	triggerRef  = `"trigger":{"type":"string","description":"The trigger's id (trg_…), or its name among the agent's triggers (then agent is needed)."}`
	optAgentRef = `"agent":{"type":"string","description":"The agent's id (ag_…) or @handle; needed when the schedule or trigger is given by name."}`
)

// named finds the one item of list called name (case-insensitive): what
// and handle word the messages.
func named[T any](list []T, nameOf func(T) string, name, what, handle string) (T, error) {
	var found []T
	for _, x := range list {
		if strings.EqualFold(strings.TrimSpace(nameOf(x)), strings.TrimSpace(name)) {
			found = append(found, x)
		}
	}
	var zero T
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return zero, fault.NotFound("@%s has no %s named %q; list_%ss shows them", handle, what, name, what)
	}
	return zero, fault.Conflict("%d %ss of @%s are named %q; give the id instead (list_%ss shows them)", len(found), what, handle, name, what)
}

// findSchedule accepts a schedule's id, or its name with the agent.
func findSchedule(ctx context.Context, w *workspace.Workspace, agentRef, ref string) (schedule.Schedule, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return schedule.Schedule{}, fault.Invalid("say which schedule: its id (sch_…), or the agent and the schedule's name; list_schedules shows them")
	}
	var a agent.Agent
	if strings.TrimSpace(agentRef) != "" {
		var err error
		if a, err = findAgent(ctx, w, agentRef); err != nil {
			return schedule.Schedule{}, err
		}
	}
	if strings.HasPrefix(ref, "sch_") {
		if sch, err := w.Schedules.Get(ctx, ref); err == nil && (a.ID == "" || sch.AgentID == a.ID) {
			return sch, nil
		}
	}
	if a.ID == "" {
		return schedule.Schedule{}, fault.NotFound("no schedule %q; give its id (sch_…), or the agent and its name; list_schedules shows them", ref)
	}
	list, err := w.Schedules.List(ctx, a.ID)
	if err != nil {
		return schedule.Schedule{}, err
	}
	return named(list, func(s schedule.Schedule) string { return s.Name }, ref, "schedule", a.Handle)
}

// findTrigger accepts a trigger's id, or its name with the agent.
func findTrigger(ctx context.Context, w *workspace.Workspace, agentRef, ref string) (trigger.Trigger, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return trigger.Trigger{}, fault.Invalid("say which trigger: its id (trg_…), or the agent and the trigger's name; list_triggers shows them")
	}
	var a agent.Agent
	if strings.TrimSpace(agentRef) != "" {
		var err error
		if a, err = findAgent(ctx, w, agentRef); err != nil {
			return trigger.Trigger{}, err
		}
	}
	if strings.HasPrefix(ref, "trg_") {
		if t, err := w.Triggers.Get(ctx, ref); err == nil && (a.ID == "" || t.AgentID == a.ID) {
			return t, nil
		}
	}
	if a.ID == "" {
		return trigger.Trigger{}, fault.NotFound("no trigger %q; give its id (trg_…), or the agent and its name; list_triggers shows them", ref)
	}
	list, err := w.Triggers.List(ctx, a.ID)
	if err != nil {
		return trigger.Trigger{}, err
	}
	return named(list, func(t trigger.Trigger) string { return t.Name }, ref, "trigger", a.Handle)
}

func scheduleTools() []toolDef {
	return []toolDef{{
		name: "list_schedules", title: "List an agent's scheduled tasks", readOnly: true, idempotent: true,
		description: "List an agent's scheduled tasks: each is an instruction the agent follows with no message from anyone, on a cron expression in a time zone or once at a date. " +
			"Shows when each fires (in words and next_fire_at), whether it is enabled, and its catch-up rule. Each runs in its own session, apart from the chat.",
		schema: `{"type":"object","properties":{` + agentRef + `},"required":["agent"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			a, err := agentOnly(ctx, w, args)
			if err != nil {
				return nil, err
			}
			list, err := w.Schedules.List(ctx, a.ID)
			return map[string]any{"schedules": list}, err
		},
	}, {
		name: "upsert_schedule", title: "Create or change a scheduled task", idempotent: true,
		description: "Create a scheduled task for an agent, or change one. To change one, name it with schedule (id or name); without it, the agent's task with the same name is changed, or a new one is created. " +
			"kind is cron (a 5-field expression such as \"0 9 * * 1-5\", or @hourly, @daily, @weekly, @monthly, @yearly) or once (at: an RFC 3339 date-time); it defaults to once when at is given, else cron. " +
			"timezone is an IANA name such as Europe/Berlin (default: the user's). catch_up says what happens to a time missed while the computer slept or the app was closed: " +
			"once (default) runs it once if it is within catch_up_within (default 24h), skip runs nothing. Changing when it fires counts from now. Only the arguments given are changed. Returns the task with its next fire time.",
		schema: `{"type":"object","properties":{` + agentRef + `,` + scheduleRef + `,` +
			`"name":{"type":"string","description":"Short name, e.g. Morning digest."},` +
			`"instruction":{"type":"string","description":"What the agent does each time, as a message to it."},` +
			`"kind":{"type":"string","enum":["cron","once"]},` +
			`"cron":{"type":"string","description":"For kind cron: 5 fields (minute hour day-of-month month day-of-week) or @daily-style."},` +
			`"timezone":{"type":"string","description":"IANA time zone, e.g. America/New_York."},` +
			`"at":{"type":"string","description":"For kind once: when, RFC 3339, e.g. 2026-12-24T09:00:00+01:00."},` +
			`"enabled":{"type":"boolean","description":"false pauses it."},` +
			`"catch_up":{"type":"string","enum":["once","skip"]},` +
			`"catch_up_within":{"type":"string","description":"How old a missed time may be and still run: a duration such as 24h or 90m (a number of seconds is also accepted)."}` +
			`},"required":["agent"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			var in struct {
				Agent    string `json:"agent"`
				Schedule string `json:"schedule"`
				schedule.Update
			}
			if err := decode(args, &in); err != nil {
				return nil, err
			}
			if err := refuseSecrets(w, "instruction", "an instruction", in.Instruction); err != nil {
				return nil, err
			}
			a, err := findAgent(ctx, w, in.Agent)
			if err != nil {
				return nil, err
			}
			var old schedule.Schedule
			switch {
			case in.Schedule != "":
				old, err = findSchedule(ctx, w, a.ID, in.Schedule)
			case in.Name != nil:
				var list []schedule.Schedule
				if list, err = w.Schedules.List(ctx, a.ID); err == nil {
					old, err = named(list, func(s schedule.Schedule) string { return s.Name }, *in.Name, "schedule", a.Handle)
				}
				if errors.Is(err, fault.ErrNotFound) {
					err = nil // a new one
				}
			}
			if err != nil {
				return nil, err
			}
			if old.ID != "" {
				sch, err := w.Schedules.Update(ctx, old.ID, in.Update)
				return map[string]any{"schedule": sch, "created": false}, err
			}
			n := schedule.NewSchedule{AgentID: a.ID, Name: deref(in.Name), Instruction: deref(in.Instruction), Enabled: in.Enabled,
				CatchUp: deref(in.CatchUp), Spec: schedule.Spec{Kind: deref(in.Kind), Cron: deref(in.Cron), Timezone: deref(in.Timezone), At: in.At}}
			if in.CatchUpWithin != nil {
				n.CatchUpWithin = *in.CatchUpWithin
			}
			if n.Kind == "" {
				n.Kind = schedule.KindCron
				if n.At != nil {
					n.Kind = schedule.KindOnce
				}
			}
			sch, err := w.Schedules.Create(ctx, n)
			return map[string]any{"schedule": sch, "created": true}, err
		},
	}, {
		name: "run_schedule_now", title: "Run a scheduled task now",
		description: "Run a scheduled task once, now, in its own session (recorded in its history as manual); its next fire time stays as it is, and a paused task runs too. " +
			"Returns the fire with the run_id; read the run with get_run.",
		schema: `{"type":"object","properties":{` + optAgentRef + `,` + scheduleRef + `},"required":["schedule"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			sch, err := scheduleArg(ctx, w, args)
			if err != nil {
				return nil, err
			}
			return w.Schedules.RunNow(ctx, sch.ID)
		},
	}, {
		name: "delete_schedule", title: "Delete a scheduled task", destructive: true, idempotent: true,
		description: "Delete a scheduled task and its history. The runs it started and its session stay.",
		schema:      `{"type":"object","properties":{` + optAgentRef + `,` + scheduleRef + `},"required":["schedule"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			sch, err := scheduleArg(ctx, w, args)
			if err != nil {
				return nil, err
			}
			if err := w.Schedules.Delete(ctx, sch.ID); err != nil {
				return nil, err
			}
			return map[string]any{"deleted": sch.ID, "name": sch.Name}, nil
		},
	}}
}

// scheduleArg decodes {agent?, schedule} and finds the schedule.
func scheduleArg(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (schedule.Schedule, error) {
	var in struct{ Agent, Schedule string }
	if err := decode(args, &in); err != nil {
		return schedule.Schedule{}, err
	}
	return findSchedule(ctx, w, in.Agent, in.Schedule)
}

// triggerArg decodes {agent?, trigger} and finds the trigger.
func triggerArg(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (trigger.Trigger, error) {
	var in struct{ Agent, Trigger string }
	if err := decode(args, &in); err != nil {
		return trigger.Trigger{}, err
	}
	return findTrigger(ctx, w, in.Agent, in.Trigger)
}

func triggerTools() []toolDef {
	return []toolDef{{
		name: "list_triggers", title: "List an agent's webhook triggers", readOnly: true, idempotent: true,
		description: "List an agent's webhook triggers: each is a URL that services (Stripe, GitHub, a form, a script) call to start a run of the agent with the trigger's instruction and the call's payload, in the trigger's own session. " +
			"Shows the allowed methods, rate limit, whether calls must be signed, and the start of each URL (the whole URL, which is its credential, is shown only when it is created or rotated).",
		schema: `{"type":"object","properties":{` + agentRef + `},"required":["agent"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			a, err := agentOnly(ctx, w, args)
			if err != nil {
				return nil, err
			}
			list, err := w.Triggers.List(ctx, a.ID)
			out := make([]TriggerView, len(list))
			for i, t := range list {
				out[i] = toTrigger(ctx, w, t)
			}
			return map[string]any{"triggers": out}, err
		},
	}, {
		name: "upsert_trigger", title: "Create or change a webhook trigger", idempotent: true,
		description: "Create a webhook trigger for an agent, or change one. To change one, name it with trigger (id or name); without it, the agent's trigger with the same name is changed, or a new one is created. " +
			"A new trigger's URL is returned in url only this once (and its public URL, through the workspace's relay, in public_url when the workspace is linked to one): it is the credential, so hand it to the calling service and keep it out of chats and logs (rotate_trigger_token makes a new one). " +
			"methods are the HTTP methods it accepts (default POST); rate_limit is calls per minute (default 60). signing_secret_var names a workspace variable that holds a Standard Webhooks signing secret (whsec_…): " +
			"calls must then be signed; the person sets the variable in the Rerun app, no tool takes its value. Only the arguments given are changed.",
		schema: `{"type":"object","properties":{` + agentRef + `,` + triggerRef + `,` +
			`"name":{"type":"string","description":"Short name, e.g. New Stripe payment."},` +
			`"instruction":{"type":"string","description":"What the agent does with each call; the call's body, content type, headers and query are handed to it beside this."},` +
			`"methods":{"type":"array","items":{"type":"string","enum":["GET","POST","PUT","PATCH","DELETE"]}},` +
			`"signing_secret_var":{"type":"string","description":"Name of the variable holding the signing secret, e.g. STRIPE_WEBHOOK_SECRET; empty: unsigned calls are accepted."},` +
			`"enabled":{"type":"boolean","description":"false pauses it: calls get 503."},` +
			`"rate_limit":{"type":"integer","minimum":1,"maximum":1000000,"description":"Calls per minute."}` +
			`},"required":["agent"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			var in struct {
				Agent   string `json:"agent"`
				Trigger string `json:"trigger"`
				trigger.Update
			}
			if err := decode(args, &in); err != nil {
				return nil, err
			}
			if err := refuseSecrets(w, "instruction", "an instruction", in.Instruction); err != nil {
				return nil, err
			}
			a, err := findAgent(ctx, w, in.Agent)
			if err != nil {
				return nil, err
			}
			var old trigger.Trigger
			switch {
			case in.Trigger != "":
				old, err = findTrigger(ctx, w, a.ID, in.Trigger)
			case in.Name != nil:
				var list []trigger.Trigger
				if list, err = w.Triggers.List(ctx, a.ID); err == nil {
					old, err = named(list, func(t trigger.Trigger) string { return t.Name }, *in.Name, "trigger", a.Handle)
				}
				if errors.Is(err, fault.ErrNotFound) {
					err = nil // a new one
				}
			}
			if err != nil {
				return nil, err
			}
			if old.ID != "" {
				t, err := w.Triggers.Update(ctx, old.ID, in.Update)
				if err != nil {
					return nil, err
				}
				return map[string]any{"trigger": toTrigger(ctx, w, t), "created": false}, nil
			}
			n := trigger.NewTrigger{AgentID: a.ID, Name: deref(in.Name), Instruction: deref(in.Instruction),
				SigningSecretVar: deref(in.SigningSecretVar), Enabled: in.Enabled, RateLimit: deref(in.RateLimit)}
			if in.Methods != nil {
				n.Methods = *in.Methods
			}
			token, t, err := w.Triggers.Create(ctx, n)
			if err != nil {
				return nil, err
			}
			created := true
			return tokenAnswer(ctx, w, t, token, &created), nil
		},
	}, {
		name: "test_trigger", title: "Test a webhook trigger",
		description: "Call a trigger from inside the app with a sample payload, as a service would (POST; no signature, rate limit or idempotency; works on a paused trigger). " +
			"It starts a real run of the agent; returns the delivery with its run_id (read the run with get_run).",
		schema: `{"type":"object","properties":{` + optAgentRef + `,` + triggerRef + `,` +
			`"payload":{"type":"string","description":"The sample body, e.g. {\"type\":\"payment.succeeded\",\"amount\":4200}."},` +
			`"content_type":{"type":"string","description":"Its content type (default application/json)."}` +
			`},"required":["trigger"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			var in struct{ Agent, Trigger, Payload, ContentType string }
			if err := decode(args, &in); err != nil {
				return nil, err
			}
			t, err := findTrigger(ctx, w, in.Agent, in.Trigger)
			if err != nil {
				return nil, err
			}
			return w.Triggers.Test(ctx, t.ID, in.Payload, in.ContentType)
		},
	}, {
		name: "rotate_trigger_token", title: "Give a webhook trigger a new URL",
		description: "Give a trigger a new URL (a new token) and return it (with public_url, through the workspace's relay, when linked), shown only this once. The old URL stops working at once, or after grace_seconds (at most 7 days) so the calling service can be switched over. " +
			"Use it when the URL may have leaked.",
		schema: `{"type":"object","properties":{` + optAgentRef + `,` + triggerRef + `,` +
			`"grace_seconds":{"type":"integer","minimum":0,"maximum":604800,"description":"How long the old URL keeps working (default 0: it stops at once)."}` +
			`},"required":["trigger"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			var in struct {
				Agent        string `json:"agent"`
				Trigger      string `json:"trigger"`
				GraceSeconds int64  `json:"grace_seconds"`
			}
			if err := decode(args, &in); err != nil {
				return nil, err
			}
			if in.GraceSeconds < 0 || in.GraceSeconds > int64(trigger.MaxGrace/time.Second) {
				return nil, fault.Invalid("grace_seconds is between 0 (the old URL stops at once) and %d (7 days)", int64(trigger.MaxGrace/time.Second))
			}
			t, err := findTrigger(ctx, w, in.Agent, in.Trigger)
			if err != nil {
				return nil, err
			}
			token, t, err := w.Triggers.Rotate(ctx, t.ID, time.Duration(in.GraceSeconds)*time.Second)
			if err != nil {
				return nil, err
			}
			return tokenAnswer(ctx, w, t, token, nil), nil
		},
	}, {
		name: "delete_trigger", title: "Delete a webhook trigger", destructive: true, idempotent: true,
		description: "Delete a webhook trigger: its URL stops working at once and its delivery list goes. The runs it started and its session stay.",
		schema:      `{"type":"object","properties":{` + optAgentRef + `,` + triggerRef + `},"required":["trigger"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			t, err := triggerArg(ctx, w, args)
			if err != nil {
				return nil, err
			}
			if err := w.Triggers.Delete(ctx, t.ID); err != nil {
				return nil, err
			}
			return map[string]any{"deleted": t.ID, "name": t.Name}, nil
		},
	}}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
