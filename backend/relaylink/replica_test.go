package relaylink_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/brain"
	"github.com/rerun-build/rerun-desktop/backend/replica"
	"github.com/rerun-build/rerun-desktop/backend/replica/replicatest"
	"github.com/rerun-build/rerun-desktop/backend/schedule"
	"github.com/rerun-build/rerun-desktop/backend/template"
	"github.com/rerun-build/rerun-desktop/backend/trigger"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// syncPair is one workspace on two devices (two data dirs) and the relay
// log between them.
type syncPair struct {
	a, b  *workspace.Workspace
	relay *replicatest.Relay
	key   []byte
}

func newPair(t *testing.T) *syncPair {
	t.Helper()
	ctx := context.Background()
	ha, err := workspace.Open(ctx, workspace.Config{DataDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ha.Close() })
	a, err := ha.Workspace(ha.Current())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Replica.Enable(ctx, true); err != nil {
		t.Fatal(err)
	}
	hb, err := workspace.Open(ctx, workspace.Config{DataDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hb.Close() })
	info, err := hb.Join(ctx, a.Info().ID, "Joining")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := hb.Workspace(info.ID)
	p := &syncPair{a: a, b: b, relay: replicatest.New(), key: bytes.Repeat([]byte{7}, 32)}
	p.converge(t)
	return p
}

func (p *syncPair) sync(t *testing.T, w *workspace.Workspace) {
	t.Helper()
	if err := w.Replica.Sync(context.Background(), p.key, p.relay); err != nil {
		t.Fatalf("sync %s: %v", w.Replica.Status().Device, err)
	}
}

// converge syncs both sides until each has seen the other's last push.
func (p *syncPair) converge(t *testing.T) {
	t.Helper()
	p.sync(t, p.a)
	p.sync(t, p.b)
	p.sync(t, p.a)
}

// dump is every synced row of w, sorted: what must be equal on both devices.
func dump(t *testing.T, w *workspace.Workspace) map[string][]string {
	t.Helper()
	return dumpDB(t, w.DB.DB)
}

func (p *syncPair) sameState(t *testing.T) {
	t.Helper()
	da, db := dump(t, p.a), dump(t, p.b)
	for _, tb := range replica.Tables {
		if !slices.Equal(da[tb.Name], db[tb.Name]) {
			t.Errorf("%s differs after sync:\n A: %v\n B: %v", tb.Name, da[tb.Name], db[tb.Name])
		}
	}
}

func mainBox(t *testing.T, w *workspace.Workspace) string {
	t.Helper()
	boxes, err := w.Boxes.List(context.Background())
	if err != nil || len(boxes) == 0 {
		t.Fatalf("boxes: %v %v", boxes, err)
	}
	return boxes[0].ID
}

const skillMD = "---\nname: digest\ndescription: Write the morning digest\n---\nRead the sales and write three lines.\n"

func TestSyncEverythingFromAToB(t *testing.T) {
	ctx := context.Background()
	p := newPair(t)
	a, b := p.a, p.b
	if got := b.Info().Name; got != a.Info().Name {
		t.Errorf("B's workspace name = %q, want A's %q", got, a.Info().Name)
	}
	if _, err := b.Boxes.Get(ctx, mainBox(t, a)); err != nil {
		t.Fatalf("A's box is not on B: %v", err)
	}
	ag, err := a.Agents.Create(ctx, agent.NewAgent{Name: "Ana", BoxID: mainBox(t, a), Soul: "You write digests."})
	if err != nil {
		t.Fatal(err)
	}
	soul := "You write crisp digests."
	if _, err := a.Agents.Update(ctx, ag.ID, agent.Update{Soul: &soul}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Skills.Upsert(ctx, ag.ID, "digest", skillMD, nil); err != nil {
		t.Fatal(err)
	}
	sch, err := a.Schedules.Create(ctx, schedule.NewSchedule{AgentID: ag.ID, Name: "Morning", Instruction: "Write the digest",
		Spec: schedule.Spec{Kind: schedule.KindCron, Cron: "0 9 * * *", Timezone: "Europe/Berlin"}})
	if err != nil {
		t.Fatal(err)
	}
	token, trg, err := a.Triggers.Create(ctx, trigger.NewTrigger{AgentID: ag.ID, Name: "Orders", Instruction: "Handle the order"})
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := a.Templates.FromAgent(ctx, ag.ID, template.Patch{})
	if err != nil {
		t.Fatal(err)
	}
	p.converge(t)

	got, err := b.Agents.Get(ctx, ag.ID)
	if err != nil {
		t.Fatalf("agent not on B: %v", err)
	}
	if got.Name != "Ana" || got.Handle != ag.Handle || got.Soul != soul {
		t.Errorf("agent on B = %q @%s soul %q, want Ana @%s %q", got.Name, got.Handle, got.Soul, ag.Handle, soul)
	}
	if souls, _ := b.Agents.Souls(ctx, ag.ID); len(souls) != 2 {
		t.Errorf("soul versions on B = %d, want 2", len(souls))
	}
	for _, sub := range []string{"files", "skills", "agent.db"} {
		if _, err := os.Stat(filepath.Join(b.Agents.Dir(ag.ID), sub)); err != nil {
			t.Errorf("agent folder on B: %v", err)
		}
	}
	if data, err := os.ReadFile(filepath.Join(b.Skills.Dir(ag.ID), "digest", "SKILL.md")); string(data) != skillMD {
		t.Errorf("skill file on B = %q (%v), want A's", data, err)
	}
	bs, err := b.Schedules.Get(ctx, sch.ID)
	if err != nil {
		t.Fatalf("schedule not on B: %v", err)
	}
	if bs.Cron != "0 9 * * *" || bs.NextFireAt == nil || !bs.NextFireAt.Equal(*sch.NextFireAt) {
		t.Errorf("schedule on B = %q next %v, want 0 9 * * * next %v", bs.Cron, bs.NextFireAt, sch.NextFireAt)
	}
	if _, err := b.Triggers.Get(ctx, trg.ID); err != nil {
		t.Errorf("trigger not on B: %v", err)
	}
	if ok, _ := b.Triggers.Owns(ctx, token); !ok {
		t.Error("B does not know A's trigger token (its hash did not sync)")
	}
	bt, err := b.Templates.Get(ctx, tpl.ID)
	if err != nil {
		t.Fatalf("template not on B: %v", err)
	}
	if bt.Soul != soul || len(bt.Skills) != 1 {
		t.Errorf("template on B: soul %q, %d skills; want A's soul and 1 skill", bt.Soul, len(bt.Skills))
	}
	p.sameState(t)

	// Deletes travel as tombstones.
	if err := a.Skills.Delete(ctx, ag.ID, "digest"); err != nil {
		t.Fatal(err)
	}
	if err := a.Templates.Delete(ctx, tpl.ID); err != nil {
		t.Fatal(err)
	}
	p.converge(t)
	if _, err := os.Stat(filepath.Join(b.Skills.Dir(ag.ID), "digest")); !os.IsNotExist(err) {
		t.Errorf("deleted skill's folder still on B: %v", err)
	}
	if _, err := os.Stat(filepath.Join(b.Dir, "templates", tpl.ID)); !os.IsNotExist(err) {
		t.Errorf("deleted template's folder still on B: %v", err)
	}
	if err := a.DeleteAgent(ctx, ag.ID); err != nil {
		t.Fatal(err)
	}
	p.converge(t)
	if _, err := b.Agents.Get(ctx, ag.ID); err == nil {
		t.Error("deleted agent still on B")
	}
	if _, err := b.Schedules.Get(ctx, sch.ID); err == nil {
		t.Error("deleted agent's schedule still on B")
	}
	if _, err := os.Stat(b.Agents.Dir(ag.ID)); !os.IsNotExist(err) {
		t.Errorf("deleted agent's folder still on B: %v", err)
	}
	p.sameState(t)
	if st := b.Replica.Status(); st.Pending != 0 || st.Parked != 0 || st.LastError != "" {
		t.Errorf("B status after sync = %+v, want nothing pending or parked", st)
	}
}

func TestSyncBackFromBToA(t *testing.T) {
	ctx := context.Background()
	p := newPair(t)
	ag, err := p.b.Agents.Create(ctx, agent.NewAgent{Name: "Bo", BoxID: mainBox(t, p.b)})
	if err != nil {
		t.Fatal(err)
	}
	p.converge(t)
	if _, err := p.a.Agents.Get(ctx, ag.ID); err != nil {
		t.Fatalf("B's agent is not on A: %v", err)
	}
	p.sameState(t)
}

func TestConcurrentOfflineEditsConverge(t *testing.T) {
	ctx := context.Background()
	p := newPair(t)
	a, b := p.a, p.b
	box := mainBox(t, a)
	same, _ := a.Agents.Create(ctx, agent.NewAgent{Name: "Same", BoxID: box})
	gone, _ := a.Agents.Create(ctx, agent.NewAgent{Name: "Gone", BoxID: box})
	onlyA, _ := a.Agents.Create(ctx, agent.NewAgent{Name: "OnlyA", BoxID: box})
	onlyB, _ := a.Agents.Create(ctx, agent.NewAgent{Name: "OnlyB", BoxID: box})
	p.converge(t)

	// Apart: both rename one agent (B later), B edits an agent A deletes
	// (A's delete later), each edits its own agent, both make an "Eve".
	p.relay.SetOffline(true)
	name := func(w *workspace.Workspace, id, n string) {
		t.Helper()
		if _, err := w.Agents.Update(ctx, id, agent.Update{Name: &n}); err != nil {
			t.Fatal(err)
		}
	}
	// Clock readings order edits made a millisecond or more apart.
	tick := func() { time.Sleep(3 * time.Millisecond) }
	name(a, same.ID, "Same by A")
	tick()
	name(b, gone.ID, "Edited by B")
	name(b, same.ID, "Same by B")
	tick()
	if err := a.DeleteAgent(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	soul := "A's soul"
	a.Agents.Update(ctx, onlyA.ID, agent.Update{Soul: &soul})
	name(b, onlyB.ID, "OnlyB renamed")
	eveA, _ := a.Agents.Create(ctx, agent.NewAgent{Name: "Eve", BoxID: box})
	eveB, _ := b.Agents.Create(ctx, agent.NewAgent{Name: "Eve", BoxID: box})
	if eveA.Handle != "eve" || eveB.Handle != "eve" {
		t.Fatalf("handles %s %s, want eve on both", eveA.Handle, eveB.Handle)
	}
	// Offline rounds fail but stamp.
	if err := a.Replica.Sync(ctx, p.key, p.relay); err == nil {
		t.Fatal("sync with the relay offline succeeded")
	}
	p.relay.SetOffline(false)
	p.converge(t)
	p.converge(t)

	p.sameState(t)
	for _, w := range []*workspace.Workspace{a, b} {
		if s, _ := w.Agents.Get(ctx, same.ID); s.Name != "Same by B" {
			t.Errorf("same agent's name = %q, want the later edit %q", s.Name, "Same by B")
		}
		if _, err := w.Agents.Get(ctx, gone.ID); err == nil {
			t.Error("the agent deleted after B's edit came back")
		}
		if s, _ := w.Agents.Get(ctx, onlyA.ID); s.Soul != soul {
			t.Errorf("A's soul edit lost: %q", s.Soul)
		}
		if s, _ := w.Agents.Get(ctx, onlyB.ID); s.Name != "OnlyB renamed" {
			t.Errorf("B's rename lost: %q", s.Name)
		}
		ea, errA := w.Agents.Get(ctx, eveA.ID)
		eb, errB := w.Agents.Get(ctx, eveB.ID)
		if errA != nil || errB != nil || ea.Handle == eb.Handle {
			t.Errorf("two Eves: @%s and @%s (%v %v), want both, with distinct handles", ea.Handle, eb.Handle, errA, errB)
		}
	}
}

func TestUncapturedLocalEditIsNotOverwritten(t *testing.T) {
	ctx := context.Background()
	p := newPair(t)
	ag, _ := p.a.Agents.Create(ctx, agent.NewAgent{Name: "X", BoxID: mainBox(t, p.a)})
	p.converge(t)
	older, newer := "older on A", "newer on B"
	p.a.Agents.Update(ctx, ag.ID, agent.Update{Name: &older})
	p.sync(t, p.a) // A's edit is on the relay
	time.Sleep(3 * time.Millisecond)
	// B edits after A, and pulls before anything stamped its edit.
	p.b.Agents.Update(ctx, ag.ID, agent.Update{Name: &newer})
	p.sync(t, p.b)
	p.sync(t, p.a)
	for _, w := range []*workspace.Workspace{p.a, p.b} {
		if got, _ := w.Agents.Get(ctx, ag.ID); got.Name != newer {
			t.Errorf("name = %q, want the later local edit %q", got.Name, newer)
		}
	}
}

func TestParentArrivingLaterIsWaitedFor(t *testing.T) {
	ctx := context.Background()
	p := newPair(t)
	p.relay.SetOffline(true)
	bx, _ := p.a.Boxes.Create(ctx, "Sales")
	ag, _ := p.a.Agents.Create(ctx, agent.NewAgent{Name: "Seller", BoxID: bx.ID})
	p.relay.SetOffline(false)
	p.sync(t, p.a)
	// Renaming the box moves its record after the agent's in the log.
	p.a.Boxes.Rename(ctx, bx.ID, "Sales team")
	p.sync(t, p.a)
	if cs := p.relay.Changes(); len(cs) < 2 {
		t.Fatalf("relay log has %d changes", len(cs))
	}
	// B pulls one change at a time up to the agent: its box is not there.
	p.sync(t, p.b)
	if _, err := p.b.Agents.Get(ctx, ag.ID); err != nil {
		t.Fatalf("agent whose box came later is not on B: %v", err)
	}
	if got, _ := p.b.Boxes.Get(ctx, bx.ID); got.Name != "Sales team" {
		t.Errorf("box on B = %q", got.Name)
	}
	if st := p.b.Replica.Status(); st.Parked != 0 {
		t.Errorf("parked after the parent came = %d, want 0", st.Parked)
	}
	p.sameState(t)
}

func TestSchedulesFireOnOneDevice(t *testing.T) {
	ctx := context.Background()
	p := newPair(t)
	if !p.a.Replica.Active() || p.b.Replica.Active() {
		t.Fatalf("active: A %v B %v, want only A (it enabled sync first)", p.a.Replica.Active(), p.b.Replica.Active())
	}
	if err := p.b.Replica.SetAutomationsDevice(ctx, p.b.Replica.Status().Device); err != nil {
		t.Fatal(err)
	}
	p.converge(t)
	if p.a.Replica.Active() || !p.b.Replica.Active() {
		t.Errorf("after moving them to B, active: A %v B %v, want only B", p.a.Replica.Active(), p.b.Replica.Active())
	}
	if d, _ := p.a.Replica.AutomationsDevice(ctx); d != p.b.Replica.Status().Device {
		t.Errorf("A's automations device = %q, want B's", d)
	}
}

func TestTamperedChangeIsRefused(t *testing.T) {
	ctx := context.Background()
	p := newPair(t)
	before := p.relay.Last()
	ag, _ := p.a.Agents.Create(ctx, agent.NewAgent{Name: "Honest", BoxID: mainBox(t, p.a)})
	p.sync(t, p.a)
	p.relay.Tamper(before)
	p.sync(t, p.b)
	if _, err := p.b.Agents.Get(ctx, ag.ID); err == nil {
		t.Fatal("B applied a tampered change")
	}
	// The next honest change of that record applies.
	n := "Honest again"
	p.a.Agents.Update(ctx, ag.ID, agent.Update{Name: &n})
	p.converge(t)
	if got, err := p.b.Agents.Get(ctx, ag.ID); err != nil || got.Name != n {
		t.Errorf("after an honest change: %q %v", got.Name, err)
	}
}

func TestRelaySeesNoPlaintext(t *testing.T) {
	ctx := context.Background()
	p := newPair(t)
	secret := "the-soul-phrase-nobody-else-may-read"
	ag, _ := p.a.Agents.Create(ctx, agent.NewAgent{Name: "Quiet", BoxID: mainBox(t, p.a), Soul: secret})
	p.converge(t)
	if got, _ := p.b.Agents.Get(ctx, ag.ID); got.Soul != secret {
		t.Fatalf("soul did not sync: %q", got.Soul)
	}
	for _, body := range p.relay.Pushed {
		for _, s := range []string{secret, ag.ID, "souls", "agents"} {
			if bytes.Contains(body, []byte(s)) {
				t.Fatalf("a pushed body contains %q in plaintext", s)
			}
		}
	}
	for _, c := range p.relay.Changes() {
		if strings.Contains(c.Key, ag.ID) {
			t.Fatal("a key names the agent")
		}
	}
}

// TestServeCarriesASoulEdit runs both engines' Serve loops: an edit on A
// reaches B through the stamp-on-change, push, notify, pull path.
func TestServeCarriesASoulEdit(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := newPair(t)
	ag, _ := p.a.Agents.Create(ctx, agent.NewAgent{Name: "Live", BoxID: mainBox(t, p.a)})
	p.converge(t)
	p.relay.OnPush = p.b.Replica.Notify
	done := make(chan struct{}, 2)
	for _, w := range []*workspace.Workspace{p.a, p.b} {
		go func() {
			w.Replica.Serve(ctx, p.key, p.relay)
			done <- struct{}{}
		}()
	}
	defer func() { cancel(); <-done; <-done }()
	soul := "Edited while both run"
	start := time.Now()
	if _, err := p.a.Agents.Update(ctx, ag.ID, agent.Update{Soul: &soul}); err != nil {
		t.Fatal(err)
	}
	for time.Since(start) < waittest.Patience {
		if got, _ := p.b.Agents.Get(ctx, ag.ID); got.Soul == soul {
			t.Logf("soul edit on A visible on B after %v", time.Since(start).Round(time.Millisecond))
			if st := p.b.Replica.Status(); st.LastSync.IsZero() || st.LastError != "" {
				t.Errorf("B status = %+v, want a last sync and no error", st)
			}
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the soul edit did not reach B within %s", waittest.Patience)
}

// Two devices apart both write a Brain page titled "Pricing": after they
// meet, both pages are on both devices, under two titles, the same on each.
func TestSameBrainTitleOnTwoDevicesConverges(t *testing.T) {
	ctx := context.Background()
	p := newPair(t)
	a, b := p.a, p.b
	p.converge(t)
	p.relay.SetOffline(true)
	pa, err := a.Brain.Create(ctx, brain.NewPage{Title: "Pricing", Body: "A's prices.", By: brain.Person})
	if err != nil {
		t.Fatal(err)
	}
	pb, err := b.Brain.Create(ctx, brain.NewPage{Title: "pricing", Body: "B's prices.", By: brain.Person})
	if err != nil {
		t.Fatal(err)
	}
	p.relay.SetOffline(false)
	p.converge(t)
	p.converge(t)
	p.sameState(t)
	keep, renamed := pa, pb
	if pb.ID < pa.ID {
		keep, renamed = pb, pa
	}
	for _, w := range []*workspace.Workspace{a, b} {
		k, err1 := w.Brain.Get(ctx, keep.ID)
		r, err2 := w.Brain.Get(ctx, renamed.ID)
		if err1 != nil || err2 != nil {
			t.Fatalf("pages on %s: %v %v, want both", w.Info().ID, err1, err2)
		}
		if k.Title != keep.Title || k.Body != keep.Body {
			t.Errorf("kept page = %q %q, want %q %q", k.Title, k.Body, keep.Title, keep.Body)
		}
		if r.Title == k.Title || !strings.HasPrefix(r.Title, renamed.Title+" (") || r.Body != renamed.Body || r.Slug == k.Slug {
			t.Errorf("renamed page = %q (%s), kept %q (%s): want the later id marked", r.Title, r.Slug, k.Title, k.Slug)
		}
	}
}
