package relaylink_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/memory"
	"github.com/rerun-build/rerun-desktop/backend/memory/memorytest"
	"github.com/rerun-build/rerun-desktop/backend/relaylink"
	"github.com/rerun-build/rerun-desktop/backend/replica"
	"github.com/rerun-build/rerun-desktop/backend/replica/replicatest"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// lockedBuffer is a log both devices write to from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// extrasPair is newPair with each device's Config given (an embedder, a
// model server) and both logs, at debug level, in one buffer.
type extrasPair struct {
	syncPair
	ha, hb *workspace.Home
	log    *lockedBuffer
}

func newExtrasPair(t *testing.T, cfgA, cfgB workspace.Config) *extrasPair {
	t.Helper()
	ctx := context.Background()
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfgA.DataDir, cfgA.Logger = t.TempDir(), logger
	cfgB.DataDir, cfgB.Logger = t.TempDir(), logger
	ha, err := workspace.Open(ctx, cfgA)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ha.Close() })
	a, _ := ha.Workspace(ha.Current())
	if err := a.Replica.Enable(ctx, true); err != nil {
		t.Fatal(err)
	}
	hb, err := workspace.Open(ctx, cfgB)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hb.Close() })
	info, err := hb.Join(ctx, a.Info().ID, "Joining")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := hb.Workspace(info.ID)
	p := &extrasPair{syncPair: syncPair{a: a, b: b, relay: replicatest.New(), key: bytes.Repeat([]byte{9}, 32)}, ha: ha, hb: hb, log: logs}
	p.converge(t)
	return p
}

// opened is the relay's log opened with the sync key: what the other
// device reads.
func (p *extrasPair) opened(t *testing.T) []replica.Record {
	t.Helper()
	var out []replica.Record
	for _, c := range p.relay.Changes() {
		r, err := replica.OpenChange(p.key, p.a.Info().ID, c)
		if err != nil {
			t.Fatalf("open a pushed change: %v", err)
		}
		out = append(out, r)
	}
	return out
}

func TestMemoriesSyncAsTextAndAreEmbeddedHere(t *testing.T) {
	ctx := context.Background()
	emb := memorytest.NewEmbedServer(t, 32)
	emb.Synonym("car", "automobile")
	// Each device embeds with its own model: no vector could travel.
	p := newExtrasPair(t, workspace.Config{EmbedBaseURL: emb.URL(), EmbedModel: "fake-a"},
		workspace.Config{EmbedBaseURL: emb.URL(), EmbedModel: "fake-b"})
	a, b := p.a, p.b
	ag, err := a.Agents.Create(ctx, agent.NewAgent{Name: "Keeper", BoxID: mainBox(t, a)})
	if err != nil {
		t.Fatal(err)
	}
	first, err := a.Memory.Remember(ctx, ag.ID, "The automobile is parked in bay seven", memory.Source{}, memory.RememberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.converge(t)

	got, err := b.Memory.Get(ctx, first.Memory.ID)
	if err != nil || got.Text != first.Memory.Text || got.AgentID != ag.ID {
		t.Fatalf("memory on B = %+v, %v; want A's text", got, err)
	}
	if hits, _ := b.Memory.List(ctx, ag.ID, memory.ListOptions{Query: "bay seven"}); len(hits) != 1 || hits[0].ID != first.Memory.ID {
		t.Errorf("keyword search on B found %v, want the memory", hits)
	}
	if !b.Memory.Indexed(ctx, ag.ID, first.Memory.ID) {
		t.Error("B has no vector of its own model for the arrived memory")
	}
	recalled, err := b.Memory.Recall(ctx, ag.ID, "car", 3)
	if err != nil || len(recalled) != 1 || recalled[0].ID != first.Memory.ID || recalled[0].Keyword != 0 || recalled[0].Meaning < 0.25 {
		t.Errorf("recall of \"car\" on B = %+v, %v; want the memory, by meaning", recalled, err)
	}
	embeddedByB := func(text string) bool {
		for _, r := range emb.Requests() {
			if r.Model == "fake-b" && slices.Contains(r.Input, text) {
				return true
			}
		}
		return false
	}
	if !embeddedByB(first.Memory.Text) {
		t.Error("B did not embed the memory's text with its own model")
	}

	// Edits: new text is embedded again on B; a superseded memory and a
	// forgotten one leave B's index.
	edited, err := a.Memory.Update(ctx, first.Memory.ID, "The automobile is parked in bay nine")
	if err != nil {
		t.Fatal(err)
	}
	p.converge(t)
	if got, _ := b.Memory.Get(ctx, first.Memory.ID); got.Text != edited.Text {
		t.Errorf("edited text on B = %q, want %q", got.Text, edited.Text)
	}
	if hits, _ := b.Memory.List(ctx, ag.ID, memory.ListOptions{Query: "nine"}); len(hits) != 1 {
		t.Errorf("keyword search for the new text on B found %d, want 1", len(hits))
	}
	if !embeddedByB(edited.Text) || !b.Memory.Indexed(ctx, ag.ID, first.Memory.ID) {
		t.Error("B did not embed the edited text")
	}
	fix, err := a.Memory.Remember(ctx, ag.ID, "The automobile moved to the north garage", memory.Source{},
		memory.RememberOptions{Supersedes: first.Memory.ID})
	if err != nil {
		t.Fatal(err)
	}
	p.converge(t)
	if b.Memory.Indexed(ctx, ag.ID, first.Memory.ID) {
		t.Error("the superseded memory is still in B's vector index")
	}
	if !b.Memory.Indexed(ctx, ag.ID, fix.Memory.ID) {
		t.Error("the correction has no vector on B")
	}
	if err := a.Memory.Forget(ctx, fix.Memory.ID); err != nil {
		t.Fatal(err)
	}
	p.converge(t)
	if _, err := b.Memory.Get(ctx, fix.Memory.ID); err == nil {
		t.Error("the forgotten memory is still on B")
	}
	if b.Memory.Indexed(ctx, ag.ID, fix.Memory.ID) {
		t.Error("the forgotten memory is still in B's vector index")
	}

	// What travelled: text and its bookkeeping, never a vector or the
	// device's own model and row number.
	want := []string{"agent_id", "created_at", "id", "last_recalled_at", "recalls", "reinforced_at", "source_run_id",
		"source_step", "state", "strength", "superseded_by", "supersedes", "text", "updated_at"}
	seen := 0
	for _, r := range p.opened(t) {
		if r.Table != "memories" || r.Deleted {
			continue
		}
		seen++
		var row map[string]json.RawMessage
		json.Unmarshal(r.Row, &row)
		var keys []string
		for k := range row {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, want) {
			t.Errorf("a memory record carries %v, want %v", keys, want)
		}
		if len(r.Row) > 1500 {
			t.Errorf("a memory record is %d bytes: more than its text", len(r.Row))
		}
	}
	if seen == 0 {
		t.Fatal("no memory record was pushed")
	}
}

func TestRunSummariesArriveAndNeverRun(t *testing.T) {
	ctx := context.Background()
	fakeA, fakeB := llmtest.New(t), llmtest.New(t)
	p := newExtrasPair(t, workspace.Config{LLM: llm.Config{OpenAIKey: "k", OpenAIBaseURL: fakeA.OpenAIURL()}},
		workspace.Config{LLM: llm.Config{OpenAIKey: "k", OpenAIBaseURL: fakeB.OpenAIURL()}})
	a, b := p.a, p.b
	for _, h := range []*workspace.Home{p.ha, p.hb} {
		sctx, stop := context.WithCancel(ctx)
		served := make(chan struct{})
		go func() { h.Serve(sctx); close(served) }()
		t.Cleanup(func() { stop(); <-served })
	}
	ag, err := a.Agents.Create(ctx, agent.NewAgent{Name: "Reporter", BoxID: mainBox(t, a)})
	if err != nil {
		t.Fatal(err)
	}
	p.converge(t)

	input := strings.Repeat("Summarise the week. ", 40) // 800 characters
	output := strings.Repeat("All good here. ", 200)    // 3,000 characters
	fakeA.Script(llmtest.Text(output))
	sess, _ := a.Runs.ChatSession(ctx, ag.ID)
	r, err := a.Runs.Start(ctx, ag.ID, sess.ID, run.SourceChat, input, run.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, waittest.Patience)
	defer cancel()
	if r, err = a.Runs.Wait(wctx, r.ID); err != nil || r.Status != run.Done {
		t.Fatalf("run on A = %s %v %s", r.Status, err, r.Error)
	}
	// Summaries of runs that did not end, as another version (or a
	// device that lies) could push: B must only show them.
	for _, st := range []string{"queued", "running"} {
		if _, err := a.DB.ExecContext(ctx, `INSERT INTO run_summaries (id, agent_id, source, status, input, created_at, device)
			VALUES (?, ?, 'chat', ?, 'do it again', ?, ?)`, "run_"+st, ag.ID, st, time.Now().UTC().Format(time.RFC3339Nano), a.Replica.DeviceID()); err != nil {
			t.Fatal(err)
		}
	}
	p.converge(t)

	mine, err := a.Relay.RunsElsewhere(ctx, ag.ID, 0)
	if err != nil || len(mine) != 0 {
		t.Errorf("A lists %d of its own runs as elsewhere (%v), want 0", len(mine), err)
	}
	list, err := b.Relay.RunsElsewhere(ctx, ag.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 {
		t.Fatalf("B lists %d runs of other devices, want 3: %+v", len(list), list)
	}
	var done *run.Summary
	for i := range list {
		if list[i].ID == r.ID {
			done = &list[i]
		}
		if list[i].Device != a.Replica.DeviceID() {
			t.Errorf("summary %s says device %q, want A's %q", list[i].ID, list[i].Device, a.Replica.DeviceID())
		}
	}
	if done == nil {
		t.Fatal("the finished run's summary is not on B")
	}
	if done.Status != run.Done || done.Input != input[:500] || done.Output != output[:2000] || done.EndedAt == nil || done.InputTokens != r.InputTokens {
		t.Errorf("summary on B = %s, input %d chars, output %d chars, ended %v, tokens %d; want done, 500, 2000, an end, %d",
			done.Status, len(done.Input), len(done.Output), done.EndedAt, done.InputTokens, r.InputTokens)
	}
	// Nothing ran or was queued on B, now or after a restart.
	time.Sleep(300 * time.Millisecond)
	if runs, _ := b.Runs.List(ctx, run.ListOptions{AgentID: ag.ID}); len(runs) != 0 {
		t.Errorf("B has %d runs of the agent, want none: summaries never run", len(runs))
	}
	var n int
	b.DB.QueryRow(`SELECT (SELECT count(*) FROM runs) + (SELECT count(*) FROM steps) + (SELECT count(*) FROM sessions WHERE agent_id = ?)`, ag.ID).Scan(&n)
	if n != 0 {
		t.Errorf("B has %d runs, steps or sessions, want 0", n)
	}
	if got := len(fakeB.Requests()); got != 0 {
		t.Errorf("B's model got %d requests, want 0", got)
	}
	for _, rec := range p.opened(t) {
		if slices.Contains([]string{"runs", "steps", "sessions", "messages"}, rec.Table) {
			t.Errorf("a %s record left A", rec.Table)
		}
	}
}

func TestVariableValuesSyncOnlyWhenOptedIn(t *testing.T) {
	ctx := context.Background()
	p := newExtrasPair(t, workspace.Config{}, workspace.Config{})
	a, b := p.a, p.b
	const (
		v1 = "ghp_canaryA1value0001"
		v2 = "ghp_canaryB2value0002"
		v3 = "ghp_canaryA3value0003"
		v4 = "ghp_canaryB4value0004"
	)
	all := []string{v1, v2, v3, v4}
	leaked := func(values ...string) {
		t.Helper()
		for _, rec := range p.opened(t) {
			for _, v := range values {
				if bytes.Contains(rec.Row, []byte(v)) {
					t.Errorf("a pushed %s record carries the value %s", rec.Table, v)
				}
			}
		}
		for _, body := range p.relay.Pushed {
			for _, v := range all {
				if bytes.Contains(body, []byte(v)) {
					t.Errorf("a pushed body carries %s in plaintext", v)
				}
			}
		}
	}
	set := func(w *workspace.Workspace, name, value string) {
		t.Helper()
		if _, err := w.Variables.Set(ctx, name, value); err != nil {
			t.Fatal(err)
		}
	}

	// Off (the default): nothing of a variable leaves, not even its name.
	if s, _ := a.Relay.VariableSync(ctx); s.Enabled {
		t.Fatal("variable sync is on by default")
	}
	set(a, "GITHUB_TOKEN", v1)
	set(b, "STRIPE_KEY", v2)
	p.converge(t)
	for _, rec := range p.opened(t) {
		if rec.Table == "variables" {
			t.Errorf("a variables record left a device with the setting off: %s", rec.PK)
		}
	}
	leaked(v1, v2)
	if b.Variables.Has("GITHUB_TOKEN") || a.Variables.Has("STRIPE_KEY") {
		t.Fatal("a variable crossed with the setting off")
	}

	// On: both devices' values go, sealed end to end, and each device
	// seals what it receives with its own data key.
	if _, err := a.Relay.SetVariableSync(ctx, relaylink.VariableSync{Enabled: true}); err != nil {
		t.Fatal(err)
	}
	p.converge(t)
	p.converge(t)
	if s, _ := b.Relay.VariableSync(ctx); !s.Enabled {
		t.Error("the setting did not reach B")
	}
	if got, _ := b.Variables.Lookup("GITHUB_TOKEN"); got != v1 {
		t.Errorf("B's GITHUB_TOKEN = %q, want A's value", got)
	}
	if got, _ := a.Variables.Lookup("STRIPE_KEY"); got != v2 {
		t.Errorf("A's STRIPE_KEY = %q, want B's value (set before the opt-in)", got)
	}
	var sealedA, sealedB string
	a.DB.QueryRow(`SELECT value FROM variables WHERE name = 'GITHUB_TOKEN'`).Scan(&sealedA)
	b.DB.QueryRow(`SELECT value FROM variables WHERE name = 'GITHUB_TOKEN'`).Scan(&sealedB)
	if sealedB == "" || sealedB == sealedA || strings.Contains(sealedB, v1) {
		t.Errorf("B stores %q: want the value sealed with B's own key", sealedB)
	}
	carried := false
	for _, rec := range p.opened(t) {
		if rec.Table == "variables" && bytes.Contains(rec.Row, []byte(v1)) {
			carried = true
		}
	}
	if !carried {
		t.Error("no end-to-end sealed record carried the value")
	}
	// A deletion travels too.
	if err := b.Variables.Delete(ctx, "STRIPE_KEY"); err != nil {
		t.Fatal(err)
	}
	p.converge(t)
	if a.Variables.Has("STRIPE_KEY") {
		t.Error("a variable deleted on B is still on A")
	}

	// Off again: later values stay where they were set.
	if _, err := b.Relay.SetVariableSync(ctx, relaylink.VariableSync{}); err != nil {
		t.Fatal(err)
	}
	p.converge(t)
	if s, _ := a.Relay.VariableSync(ctx); s.Enabled {
		t.Fatal("turning it off on B did not reach A")
	}
	set(a, "GITHUB_TOKEN", v3)
	set(b, "OPENAI_KEY", v4)
	p.converge(t)
	leaked(v3, v4)
	if got, _ := b.Variables.Lookup("GITHUB_TOKEN"); got != v1 {
		t.Errorf("B's GITHUB_TOKEN = %q after A changed it with sync off, want the old value", got)
	}
	if a.Variables.Has("OPENAI_KEY") {
		t.Error("B's new variable reached A with sync off")
	}
	leaked() // the raw bodies, for every value
	for _, v := range all {
		if strings.Contains(p.log.String(), v) {
			t.Errorf("the log carries %s", v)
		}
	}
}

// An embedder that fails while memories arrive costs one attempt, not one
// per memory: the rest are only marked, and embedded later.
func TestArrivalsStopCallingAFailingEmbedder(t *testing.T) {
	ctx := context.Background()
	emb := memorytest.NewEmbedServer(t, 32)
	p := newExtrasPair(t, workspace.Config{EmbedBaseURL: emb.URL(), EmbedModel: "fake-a"},
		workspace.Config{EmbedBaseURL: emb.URL(), EmbedModel: "fake-b"})
	a, b := p.a, p.b
	ag, err := a.Agents.Create(ctx, agent.NewAgent{Name: "Keeper", BoxID: mainBox(t, a)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, text := range []string{"The van is blue", "Invoices go out on Fridays", "The office opens at nine"} {
		m, err := a.Memory.Remember(ctx, ag.ID, text, memory.Source{}, memory.RememberOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.Memory.ID)
	}
	byB := func() int {
		n := 0
		for _, r := range emb.Requests() {
			if r.Model == "fake-b" {
				n++
			}
		}
		return n
	}
	emb.FailNext(1000)
	p.converge(t)
	calls := byB()
	if calls == 0 {
		t.Fatal("B never tried its embedder for the arrived memories")
	}
	for _, id := range ids {
		if _, err := b.Memory.Get(ctx, id); err != nil {
			t.Fatalf("memory %s did not arrive on B: %v", id, err)
		}
	}
	// One arrival's attempt (with its retries), then only marking.
	p2, err := b.Memory.Stale(ctx)
	if err != nil || p2 != len(ids) {
		t.Fatalf("stale on B = %d, %v; want all %d marked for embedding", p2, err, len(ids))
	}
	emb.FailNext(0)
	if err := b.Memory.Reembed(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if !b.Memory.Indexed(ctx, ag.ID, id) {
			t.Errorf("memory %s not embedded on B after the embedder came back", id)
		}
	}
	t.Logf("B called its failing embedder %d times for %d arrivals", calls, len(ids))
	if calls >= len(ids) {
		t.Errorf("B called its failing embedder %d times for %d arrivals; want one arrival's attempt only", calls, len(ids))
	}
}
