package relaylink_test

// Device sync between two real desktops (`rerun serve` on two data dirs)
// through a real rerun-relay, on loopback: pairing through the API, live
// edits, concurrent offline edits converging, one run per webhook in total,
// the relay's file holding no plaintext, and 1,000 webhooks while the
// desktops' connections are cut at random.

import (
	"bytes"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/replica"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// syncedRows reads every synced row of the workspace database at path
// (read-only, beside the running process).
func syncedRows(t *testing.T, path string) map[string][]string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return dumpDB(t, db)
}

// dumpDB is every synced row of a workspace database, sorted, per table:
// what must be equal on devices.
func dumpDB(t *testing.T, db *sql.DB) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, tb := range replica.Tables {
		rows, err := db.Query(`SELECT name FROM pragma_table_info(?)`, tb.Name)
		if err != nil {
			t.Fatal(err)
		}
		var cols []string
		for rows.Next() {
			var c string
			rows.Scan(&c)
			if !slices.Contains(tb.Exclude, c) {
				cols = append(cols, fmt.Sprintf(`'%s', "%s"`, c, c))
			}
		}
		rows.Close()
		if len(cols) == 0 {
			continue
		}
		where := "1"
		if tb.Where != "" {
			where = fmt.Sprintf(tb.Where, tb.Name)
		}
		r, err := db.Query(`SELECT json_object(` + strings.Join(cols, ", ") + `) FROM ` + tb.Name + ` WHERE ` + where)
		if err != nil {
			t.Fatal(err)
		}
		for r.Next() {
			var s string
			r.Scan(&s)
			out[tb.Name] = append(out[tb.Name], s)
		}
		r.Close()
		slices.Sort(out[tb.Name])
	}
	return out
}

// converged waits until both databases hold the same synced rows.
func converged(t *testing.T, a, b, what string) {
	t.Helper()
	deadline := time.Now().Add(waittest.Patience)
	for {
		ra, rb := syncedRows(t, a), syncedRows(t, b)
		if reflect.DeepEqual(ra, rb) {
			return
		}
		if time.Now().After(deadline) {
			for tb := range ra {
				if !reflect.DeepEqual(ra[tb], rb[tb]) {
					t.Errorf("%s: table %s differs:\nA %v\nB %v", what, tb, ra[tb], rb[tb])
				}
			}
			t.Fatalf("%s: the devices did not converge in %s", what, waittest.Patience)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type agentView struct {
	ID, Name, Soul string
}

func TestSyncProcesses(t *testing.T) {
	rerunBin, relayBin := binaries(t)
	dir := t.TempDir()
	relayDB := filepath.Join(dir, "relay.db")
	relayWS, secret := newRelayWorkspace(t, relayBin, relayDB)
	relayProc, relayURL := procRelay(t, relayBin, relayDB, "")
	px := startProxy(t, strings.TrimPrefix(relayURL, "http://"))
	a := procDesktop(t, rerunBin, filepath.Join(dir, "a"))
	b := procDesktop(t, rerunBin, filepath.Join(dir, "b"))

	var list struct{ Current string }
	a.api("GET", "/api/workspaces", nil, &list)
	wsID := list.Current
	ws := "/api/workspaces/" + wsID
	dbA := filepath.Join(a.dir, "workspaces", wsID, "workspace.db")
	dbB := filepath.Join(b.dir, "workspaces", wsID, "workspace.db")
	var board struct{ Boxes []struct{ ID string } }
	a.api("GET", ws+"/board", nil, &board)
	box := board.Boxes[len(board.Boxes)-1].ID
	newAgent := func(d *desktop, name string) agentView {
		t.Helper()
		var ag agentView
		if got := d.api("POST", ws+"/agents", map[string]string{"name": name, "box_id": box, "soul": name + " soul"}, &ag); got != 201 {
			t.Fatalf("create agent %s: %d", name, got)
		}
		return ag
	}
	patch := func(d *desktop, id string, body map[string]string) {
		t.Helper()
		if got := d.api("PATCH", ws+"/agents/"+id, body, nil); got != 200 {
			t.Fatalf("update agent %s: %d", id, got)
		}
	}
	get := func(d *desktop, id string) (agentView, int) {
		var ag agentView
		code := d.api("GET", ws+"/agents/"+id, nil, &ag)
		return ag, code
	}
	ada, bob, dan := newAgent(a, "Ada"), newAgent(a, "Bob"), newAgent(a, "Dan")

	// Link A, pair B through the API.
	var st map[string]any
	if got := a.api("POST", ws+"/relay", map[string]string{"relay_url": px.URL(), "workspace_id": relayWS, "secret": secret}, &st); got != 201 {
		t.Fatalf("link A: %d %v", got, st)
	}
	var pairing struct{ Code string }
	if got := a.api("POST", ws+"/relay/pairing", nil, &pairing); got != 201 || !strings.HasPrefix(pairing.Code, "rerun-pair-1.") {
		t.Fatalf("pairing code: %d %q", got, pairing.Code)
	}
	var refused map[string]string
	if got := b.api("POST", "/api/relay/join", map[string]string{"code": "rerun-pair-1.garbage"}, &refused); got != 400 || refused["error"] == "" {
		t.Errorf("join with a damaged code: %d %v, want 400 saying why", got, refused)
	}
	var joined struct{ ID, Name string }
	if got := b.api("POST", "/api/relay/join", map[string]string{"code": pairing.Code}, &joined); got != 201 || joined.ID != wsID {
		t.Fatalf("join B: %d %+v, want workspace %s", got, joined, wsID)
	}
	if got := b.api("POST", "/api/relay/join", map[string]string{"code": pairing.Code}, nil); got != 409 {
		t.Errorf("join twice: %d, want 409", got)
	}
	if got := a.api("POST", "/api/relay/join", map[string]string{"code": pairing.Code}, nil); got != 409 {
		t.Errorf("join on the device that made the code: %d, want 409", got)
	}
	converged(t, dbA, dbB, "after the join")
	if got, code := get(b, ada.ID); code != 200 || got.Name != "Ada" || got.Soul != "Ada soul" {
		t.Fatalf("Ada on B: %d %+v", code, got)
	}

	// Live: an edit on A reaches B.
	patch(a, ada.ID, map[string]string{"soul": "Ada, live from A"})
	waitFor(t, "A's soul edit on B", func() bool { got, _ := get(b, ada.ID); return got.Soul == "Ada, live from A" })

	// A webhook while both are connected: one run, on A (the automations
	// device) only.
	var created struct {
		PublicURL string `json:"public_url"`
		Trigger   struct {
			SessionID string `json:"session_id"`
		}
	}
	if got := a.api("POST", ws+"/agents/"+ada.ID+"/triggers", map[string]any{"name": "Orders", "instruction": "File it.", "rate_limit": 100000}, &created); got != 201 {
		t.Fatalf("create trigger: %d", got)
	}
	session := created.Trigger.SessionID
	converged(t, dbA, dbB, "after the trigger")
	var stB map[string]any
	b.api("GET", ws+"/relay", nil, &stB)
	if stB["automations_device"] != false || stB["connected"] != true {
		t.Fatalf("B's relay status %v: want connected, not the automations device", stB)
	}
	for deadline := time.Now().Add(waittest.Patience); post(t, created.PublicURL, `{"n":0}`) != 202; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the public URL never answered 202")
		}
	}
	waitCount(t, dbA, session, 1, "a webhook with both devices connected, on A")
	if n := runCount(t, dbB, session); n != 0 {
		t.Fatalf("B ran %d runs of the webhook, want 0 (only the automations device takes it)", n)
	}

	// Offline: the relay is down while both devices edit.
	relayProc.kill()
	px.cut()
	patch(a, ada.ID, map[string]string{"soul": "Ada offline from A"})
	patch(a, bob.ID, map[string]string{"soul": "Bob offline from A"})
	eve := newAgent(a, "Evangeline Offline")
	if got := a.api("DELETE", ws+"/agents/"+dan.ID, nil, nil); got != 204 {
		t.Fatalf("delete Dan on A: %d", got)
	}
	time.Sleep(20 * time.Millisecond) // B's edits are the later ones
	patch(b, ada.ID, map[string]string{"soul": "Ada offline from B, later"})
	if got := b.api("DELETE", ws+"/agents/"+bob.ID, nil, nil); got != 204 {
		t.Fatalf("delete Bob on B: %d", got)
	}
	patch(b, dan.ID, map[string]string{"name": "Dan from B"})
	time.Sleep(300 * time.Millisecond)
	if got, _ := get(b, eve.ID); got.ID != "" {
		t.Fatal("Eve reached B while the relay was down")
	}
	relayProc, _ = procRelay(t, relayBin, relayDB, strings.TrimPrefix(relayURL, "http://"))
	converged(t, dbA, dbB, "after the relay came back")
	for _, d := range []*desktop{a, b} {
		if got, _ := get(d, ada.ID); got.Soul != "Ada offline from B, later" {
			t.Errorf("Ada's soul %q, want the later edit (B's)", got.Soul)
		}
		if _, code := get(d, bob.ID); code != 404 {
			t.Errorf("Bob: %d, want 404 (B's delete came after A's edit)", code)
		}
		if got, _ := get(d, eve.ID); got.Name != "Evangeline Offline" {
			t.Errorf("Eve %+v, want A's new agent everywhere", got)
		}
		if got, _ := get(d, dan.ID); got.Name != "Dan from B" {
			t.Errorf("Dan %+v, want B's rename (after A's delete) to win", got)
		}
	}

	// The relay holds no plaintext of a soul or a name.
	var relayBytes []byte
	for _, f := range []string{relayDB, relayDB + "-wal"} {
		if b, err := os.ReadFile(f); err == nil {
			relayBytes = append(relayBytes, b...)
		}
	}
	for _, plain := range []string{"Ada offline from B, later", "Bob offline from A", "Evangeline Offline", "Ada, live from A"} {
		if bytes.Contains(relayBytes, []byte(plain)) {
			t.Errorf("the relay's database holds %q in plaintext", plain)
		}
	}

	// 1,000 webhooks while the desktops' connections are cut at random:
	// 1,000 runs in total, all on A, none twice.
	const n = 1000
	stop := make(chan struct{})
	var cuts sync.WaitGroup
	cuts.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(20+rand.IntN(130)) * time.Millisecond):
				px.cut()
			}
		}
	})
	start := time.Now()
	for i := range n {
		if got := post(t, created.PublicURL, fmt.Sprintf(`{"n":%d}`, i+1)); got != 202 {
			t.Fatalf("webhook %d: %d", i+1, got)
		}
	}
	waittest.Progress(t, "runs of the 1,000 webhooks", waittest.Stall, func() (int, bool) {
		runs := runCount(t, dbA, session)
		return runs, runs >= n+1
	})
	close(stop)
	cuts.Wait()
	waitCount(t, dbA, session, n+1, "1,000 webhooks with random disconnects")
	if got := runCount(t, dbB, session); got != 0 {
		t.Errorf("B ran %d of the webhooks, want 0", got)
	}
	t.Logf("1,000 webhooks with random disconnects: all runs queued in %v", time.Since(start).Round(time.Millisecond))
}
