package agent_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/box"
	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store/storetest"
)

type fixture struct {
	boxes  *box.Service
	agents *agent.Service
	bus    *event.Bus
	dir    string
	main   box.Box
}

func setup(t *testing.T) *fixture {
	t.Helper()
	db := storetest.Open(t)
	f := &fixture{bus: &event.Bus{}, dir: t.TempDir()}
	f.boxes = box.NewService(db, "ws_test", f.bus)
	f.agents = agent.NewService(db, f.dir, "ws_test", f.bus)
	var err error
	if f.main, err = f.boxes.Create(context.Background(), "Main"); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) create(t *testing.T, in agent.NewAgent) agent.Agent {
	t.Helper()
	if in.BoxID == "" {
		in.BoxID = f.main.ID
	}
	a, err := f.agents.Create(context.Background(), in)
	if err != nil {
		t.Fatalf("create %q: %v", in.Name, err)
	}
	return a
}

func TestCreateLaysOutPrivateFolder(t *testing.T) {
	f := setup(t)
	a := f.create(t, agent.NewAgent{Name: "Inbox Keeper", Soul: "# You answer the inbox"})
	if a.Handle != "inbox-keeper" {
		t.Errorf("handle = %q, want inbox-keeper", a.Handle)
	}
	if !reflect.DeepEqual(a.Capabilities, agent.DefaultCapabilities()) {
		t.Errorf("capabilities = %v, want defaults %v", a.Capabilities, agent.DefaultCapabilities())
	}
	for _, p := range []string{"files", "skills", "agent.db"} {
		if _, err := os.Stat(filepath.Join(f.dir, a.ID, p)); err != nil {
			t.Errorf("private %s missing: %v", p, err)
		}
	}
	got, err := f.agents.Get(context.Background(), a.ID)
	if err != nil || got.Soul != "# You answer the inbox" {
		t.Errorf("Get = %+v, %v; want the soul stored", got, err)
	}
}

func TestDuplicateHandle(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	f.create(t, agent.NewAgent{Name: "Scout", Handle: "scout"})
	_, err := f.agents.Create(ctx, agent.NewAgent{Name: "Other", Handle: "scout", BoxID: f.main.ID})
	if !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("explicit duplicate handle: got %v, want ErrConflict", err)
	}
	if !strings.Contains(fault.Message(err), "@scout is already taken") {
		t.Errorf("message %q does not say which handle is taken", fault.Message(err))
	}
	// A derived handle steps around the taken one instead.
	b := f.create(t, agent.NewAgent{Name: "Scout"})
	if b.Handle != "scout-2" {
		t.Errorf("derived handle next to a taken one = %q, want scout-2", b.Handle)
	}
	entries, _ := os.ReadDir(f.dir)
	if len(entries) != 2 {
		t.Errorf("agent folders = %d, want 2 (the refused create must leave none)", len(entries))
	}
}

func TestCreateRejects(t *testing.T) {
	f := setup(t)
	for _, tc := range []struct {
		name string
		in   agent.NewAgent
		kind error
	}{
		{"no name", agent.NewAgent{Name: "  "}, fault.ErrInvalid},
		{"bad handle", agent.NewAgent{Name: "X", Handle: "Bad Handle"}, fault.ErrInvalid},
		{"unknown capability", agent.NewAgent{Name: "X", Capabilities: []string{"teleport"}}, fault.ErrInvalid},
		{"unknown box", agent.NewAgent{Name: "X", BoxID: "bx_nope"}, fault.ErrNotFound},
		{"huge soul", agent.NewAgent{Name: "X", Soul: strings.Repeat("x", agent.MaxSoulLen+1)}, fault.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.in.BoxID == "" {
				tc.in.BoxID = f.main.ID
			}
			_, err := f.agents.Create(context.Background(), tc.in)
			if !errors.Is(err, tc.kind) {
				t.Errorf("got %v, want %v", err, tc.kind)
			}
		})
	}
	list, _ := f.agents.List(context.Background())
	if len(list) != 0 {
		t.Errorf("agents after refused creates = %d, want 0", len(list))
	}
}

func TestMoveKeepsEverythingElse(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	other, _ := f.boxes.Create(ctx, "Sales")
	a := f.create(t, agent.NewAgent{Name: "Closer", Soul: "v1", Provider: "anthropic", Model: "claude-x", Capabilities: []string{"files", "shell"}})
	a, _ = f.agents.Update(ctx, a.ID, agent.Update{Soul: ptr("v2")})
	os.WriteFile(filepath.Join(f.dir, a.ID, "files", "notes.txt"), []byte("keep me"), 0o600)

	moved, err := f.agents.Update(ctx, a.ID, agent.Update{BoxID: &other.ID})
	if err != nil {
		t.Fatal(err)
	}
	if moved.BoxID != other.ID {
		t.Errorf("box after move = %s, want %s", moved.BoxID, other.ID)
	}
	want := a
	want.BoxID, want.UpdatedAt = moved.BoxID, moved.UpdatedAt
	if !reflect.DeepEqual(moved, want) {
		t.Errorf("move changed more than the box:\n got %+v\nwant %+v", moved, want)
	}
	souls, _ := f.agents.Souls(ctx, a.ID)
	if len(souls) != 2 {
		t.Errorf("soul versions after move = %d, want 2", len(souls))
	}
	if b, err := os.ReadFile(filepath.Join(f.dir, a.ID, "files", "notes.txt")); string(b) != "keep me" {
		t.Errorf("private file after move = %q, %v", b, err)
	}
	if _, err := f.agents.Update(ctx, a.ID, agent.Update{BoxID: ptr("bx_gone")}); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("move to unknown box: got %v, want ErrNotFound", err)
	}
}

func TestSoulHistory(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	a := f.create(t, agent.NewAgent{Name: "Writer", Soul: "one"})
	f.agents.Update(ctx, a.ID, agent.Update{Soul: ptr("two")})
	f.agents.Update(ctx, a.ID, agent.Update{Soul: ptr("two")}) // unchanged: no new version
	f.agents.Update(ctx, a.ID, agent.Update{Name: ptr("Writer II")})
	f.agents.Update(ctx, a.ID, agent.Update{Soul: ptr("three"), SoulAuthor: agent.SoulByAgent})
	souls, err := f.agents.Souls(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, s := range souls {
		bodies = append(bodies, s.Body)
	}
	if want := []string{"three", "two", "one"}; !reflect.DeepEqual(bodies, want) {
		t.Errorf("soul history = %v, want %v", bodies, want)
	}
	if souls[0].Version != 3 || souls[2].Version != 1 {
		t.Errorf("versions = %d..%d, want 3..1", souls[0].Version, souls[2].Version)
	}
	var authors []string
	for _, s := range souls {
		authors = append(authors, s.Author)
	}
	if want := []string{agent.SoulByAgent, agent.SoulByPerson, ""}; !reflect.DeepEqual(authors, want) {
		t.Errorf("soul authors = %q, want %q (the agent, you, the first version)", authors, want)
	}
	got, _ := f.agents.Get(ctx, a.ID)
	if got.Soul != "three" || got.Name != "Writer II" || got.Handle != "writer" {
		t.Errorf("agent = %+v; want soul three, name Writer II, handle unchanged", got)
	}
}

func TestBadUpdateChangesNothing(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	a := f.create(t, agent.NewAgent{Name: "Keeper", Soul: "s"})
	for name, u := range map[string]agent.Update{
		"empty name":         {Name: ptr(""), Soul: ptr("new soul")},
		"unknown capability": {Capabilities: &[]string{"files", "x"}, Soul: ptr("new soul")},
		"unknown box":        {BoxID: ptr("bx_x"), Soul: ptr("new soul")},
		"long model":         {Model: ptr(strings.Repeat("m", 500)), Soul: ptr("new soul")},
	} {
		if _, err := f.agents.Update(ctx, a.ID, u); err == nil {
			t.Errorf("%s: update succeeded, want an error", name)
		}
	}
	got, _ := f.agents.Get(ctx, a.ID)
	if !reflect.DeepEqual(got, a) {
		t.Errorf("agent after refused updates = %+v, want unchanged %+v", got, a)
	}
}

func TestDeleteRemovesFolder(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	a := f.create(t, agent.NewAgent{Name: "Temp"})
	if err := f.agents.Delete(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(f.dir, a.ID)); !os.IsNotExist(err) {
		t.Errorf("folder after delete: %v, want gone", err)
	}
	if _, err := f.agents.Get(ctx, a.ID); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("Get after delete: %v, want ErrNotFound", err)
	}
	if err := f.agents.Delete(ctx, "../../etc"); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("delete of a path-like id: %v, want ErrNotFound", err)
	}
	// The handle is free again.
	if b := f.create(t, agent.NewAgent{Name: "Temp"}); b.Handle != "temp" {
		t.Errorf("handle after delete = %q, want temp", b.Handle)
	}
}

func TestChangesArePublished(t *testing.T) {
	f := setup(t)
	ch, stop := f.bus.Subscribe()
	defer stop()
	a := f.create(t, agent.NewAgent{Name: "Pub"})
	f.agents.Update(context.Background(), a.ID, agent.Update{Name: ptr("Pub 2")})
	f.agents.Delete(context.Background(), a.ID)
	var kinds []string
	for i := 0; i < 3; i++ {
		c := <-ch
		if c.ID != a.ID || c.Workspace != "ws_test" {
			t.Errorf("change %+v: want agent %s in ws_test", c, a.ID)
		}
		kinds = append(kinds, c.Kind)
	}
	if want := []string{"agent.created", "agent.updated", "agent.deleted"}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("kinds = %v, want %v", kinds, want)
	}
}

func ptr[T any](v T) *T { return &v }

func TestAskFirst(t *testing.T) {
	ctx := context.Background()
	f := setup(t)
	svc := f.agents
	a, err := svc.Create(ctx, agent.NewAgent{Name: "Careful", BoxID: f.main.ID})
	if err != nil {
		t.Fatal(err)
	}
	want := agent.AskFirst{"files": false, "shell": true, "database": true, "web": true, "soul": false, "agents": false, "memory": false, "skills": false}
	if !maps.Equal(a.AskFirst, want) {
		t.Fatalf("new agent ask_first = %v, want %v", a.AskFirst, want)
	}
	got, err := svc.Update(ctx, a.ID, agent.Update{AskFirst: map[string]bool{"shell": false, "files": true}})
	if err != nil {
		t.Fatal(err)
	}
	want["shell"], want["files"] = false, true
	if !maps.Equal(got.AskFirst, want) {
		t.Fatalf("after update ask_first = %v, want %v", got.AskFirst, want)
	}
	again, _ := svc.Get(ctx, a.ID)
	if !maps.Equal(again.AskFirst, want) {
		t.Fatalf("stored ask_first = %v, want %v", again.AskFirst, want)
	}
	_, err = svc.Update(ctx, a.ID, agent.Update{AskFirst: map[string]bool{"browserz": true}})
	if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), "browserz") {
		t.Fatalf("unknown family: got %v, want an invalid error naming it", err)
	}
}

func TestNetworkSwitch(t *testing.T) {
	ctx := context.Background()
	f := setup(t)
	svc := f.agents
	a := f.create(t, agent.NewAgent{Name: "Offline"})
	if !a.Network {
		t.Fatal("a new agent's network is off, want on by default")
	}
	off := false
	got, err := svc.Update(ctx, a.ID, agent.Update{Network: &off})
	if err != nil || got.Network {
		t.Fatalf("switch the network off: %v, network %v", err, got.Network)
	}
	again, _ := svc.Get(ctx, a.ID)
	if again.Network {
		t.Fatal("the network switch was not stored")
	}
	name := "Renamed"
	if got, _ := svc.Update(ctx, a.ID, agent.Update{Name: &name}); got.Network {
		t.Fatal("an update without network switched it back on")
	}
}

// TestRoster: Roster is List without souls and ask-first policies, in the
// same order, and what a caller does to one answer's slices never shows in
// the next (the decoded columns are shared between rows).
func TestRoster(t *testing.T) {
	ctx := context.Background()
	f := setup(t)
	f.create(t, agent.NewAgent{Name: "First", Soul: "# First"})
	f.create(t, agent.NewAgent{Name: "Second", Soul: "# Second", Capabilities: []string{"files"}, AskFirst: map[string]bool{"files": true}})
	f.create(t, agent.NewAgent{Name: "Third"})
	list, err := f.agents.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	roster, err := f.agents.Roster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(roster) != len(list) {
		t.Fatalf("roster has %d agents, list %d", len(roster), len(list))
	}
	for i, a := range list {
		a.Soul, a.AskFirst = "", nil
		if !reflect.DeepEqual(roster[i], a) {
			t.Errorf("roster[%d] = %+v, want %+v", i, roster[i], a)
		}
	}
	roster[0].Capabilities[0] = "changed"
	list[0].AskFirst["files"] = !list[0].AskFirst["files"]
	again, _ := f.agents.List(ctx)
	if again[0].Capabilities[0] == "changed" || again[2].Capabilities[0] == "changed" {
		t.Errorf("a caller's change to capabilities showed in the next list: %v", again[0].Capabilities)
	}
	if again[0].AskFirst["files"] == list[0].AskFirst["files"] {
		t.Errorf("a caller's change to ask_first showed in the next list: %v", again[0].AskFirst)
	}
}
