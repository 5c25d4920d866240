package workspace_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/backup"
	"github.com/rerun-build/rerun-desktop/backend/brain"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/memory"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/schedule"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/trigger"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

func init() { backup.WorkFactor = 10 } // a second of scrypt per backup is for people

const backupPass = "tiger lily 42"

// servedHome opens and serves a data directory until the test ends.
// backups is workspace id's backups (backend/backup).
func backups(t *testing.T, h *workspace.Home, id string) backup.Workspace {
	t.Helper()
	b, err := h.Backups(id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func servedHome(t *testing.T, fake *llmtest.Server) *workspace.Home {
	t.Helper()
	h, err := workspace.Open(context.Background(), workspace.Config{DataDir: t.TempDir(),
		LLM: llm.Config{OpenAIKey: "k", OpenAIBaseURL: fake.OpenAIURL()}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.Serve(ctx); close(done) }()
	t.Cleanup(func() { stop(); <-done; h.Close() })
	return h
}

// filled makes a workspace with runs, memories, variables, skills, Brain,
// files, databases and a run paused on a question.
func filled(t *testing.T, h *workspace.Home, fake *llmtest.Server) (*workspace.Workspace, run.Run) {
	t.Helper()
	ctx := context.Background()
	w, _ := h.Workspace(h.Current())
	a, err := w.Agents.Create(ctx, agent.NewAgent{Name: "Ada", BoxID: firstBox(t, w), Capabilities: []string{"human", "memory", "files"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Variables.Set(ctx, "GITHUB_TOKEN", "ghp_backupcanary0123456789"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Memory.Remember(ctx, a.ID, "The customer prefers invoices in EUR", memory.Source{}, memory.RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Skills.Upsert(ctx, a.ID, "invoices", "---\nname: invoices\ndescription: How to send invoices\n---\nUse EUR.\n", map[string][]byte{"ref/rates.md": []byte("1 EUR")}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Brain.Create(ctx, brain.NewPage{Title: "What we sell", Body: "Bicycles.", By: brain.Person}); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(w.Dir, "shared", "docs"), 0o700)
	os.WriteFile(filepath.Join(w.Dir, "shared", "docs", "plan.md"), []byte("the plan"), 0o600)
	os.MkdirAll(filepath.Join(w.Dir, "agents", a.ID, "files"), 0o700)
	os.WriteFile(filepath.Join(w.Dir, "agents", a.ID, "files", "notes.txt"), []byte(strings.Repeat("note ", 20000)), 0o600)
	for _, p := range []string{filepath.Join(w.Dir, "shared.db"), filepath.Join(w.Dir, "agents", a.ID, "agent.db")} {
		db, err := store.Open(ctx, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS leads (name TEXT)`)
		db.ExecContext(ctx, `INSERT INTO leads VALUES ('Bo'), ('Cy')`)
		db.Close()
	}
	wait := func(r run.Run) run.Run {
		wctx, cancel := context.WithTimeout(ctx, waittest.Patience)
		defer cancel()
		r, err := w.Runs.Wait(wctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	sess, _ := w.Runs.ChatSession(ctx, a.ID)
	fake.Script(llmtest.Text("Hello."))
	r, err := w.Runs.Start(ctx, a.ID, sess.ID, run.SourceChat, "hi", run.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r = wait(r); r.Status != run.Done {
		t.Fatalf("first run = %s, want done", r.Status)
	}
	fake.Script(llmtest.Tools(llmtest.ToolCall{ID: "q", Name: "ask_question", Args: `{"questions":[{"question":"Send it?","options":["Yes","No"]}]}`}))
	r, err = w.Runs.Start(ctx, a.ID, sess.ID, run.SourceChat, "send the invoice", run.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r = wait(r); r.Status != run.Paused {
		t.Fatalf("second run = %s, want paused", r.Status)
	}
	if _, _, err := w.Keys.Create(ctx, "ci"); err != nil {
		t.Fatal(err)
	}
	return w, r
}

// tables reads every table of db as sorted rows of text.
func tables(t *testing.T, db *store.DB, skip ...string) map[string][]string {
	t.Helper()
	ctx := context.Background()
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%_fts_%'`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		names = append(names, n)
	}
	rows.Close()
	out := map[string][]string{}
	for _, n := range names {
		if slices.Contains(skip, n) {
			continue
		}
		rs, err := db.QueryContext(ctx, `SELECT * FROM "`+n+`"`)
		if err != nil {
			t.Fatalf("read %s: %v", n, err)
		}
		cols, _ := rs.Columns()
		var lines []string
		for rs.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			rs.Scan(ptrs...)
			b, _ := json.Marshal(vals)
			lines = append(lines, string(b))
		}
		rs.Close()
		slices.Sort(lines)
		out[n] = lines
	}
	return out
}

// files hashes every file under dir but the databases and what a backup leaves out.
func files(t *testing.T, dir string) map[string]string {
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.Contains(rel, ".db") || strings.Contains(rel, "/browser/") {
			return nil
		}
		b, _ := os.ReadFile(p)
		s := sha256.Sum256(b)
		out[filepath.ToSlash(rel)] = hex.EncodeToString(s[:])
		return nil
	})
	return out
}

func TestBackupRestoreElsewhere(t *testing.T) {
	ctx := context.Background()
	fake := llmtest.New(t)
	src := servedHome(t, fake)
	w, paused := filled(t, src, fake)

	path := filepath.Join(t.TempDir(), "acme.rerun-backup")
	f, _ := os.Create(path)
	start := time.Now()
	res, err := backups(t, src, w.Info().ID).Backup(ctx, backupPass, "test", f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	t.Logf("backup: %d files, %d bytes inside, %d bytes on disk, in %s", res.Files, res.Bytes, st.Size(), time.Since(start))
	raw, _ := os.ReadFile(path)
	// Long phrases only: a 3-byte word turns up by chance in megabytes of
	// ciphertext about one time in eight.
	for _, plain := range []string{"ghp_backupcanary", "prefers invoices in EUR", "How to send invoices"} {
		if strings.Contains(string(raw), plain) {
			t.Fatalf("the backup file carries %q in plain text: it is not encrypted", plain)
		}
	}

	dst := servedHome(t, fake)
	before := dst.List()
	info, err := dst.Restore(ctx, path, backupPass, "")
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "Personal (restored)" || len(dst.List()) != len(before)+1 {
		t.Fatalf("restored %+v, workspaces %d; want one more named Personal (restored)", info, len(dst.List()))
	}
	r, _ := dst.Workspace(info.ID)

	// Every table equal but what is this machine's: the sealed values, the
	// API keys, the name, the device id sync knows this machine by.
	skip := []string{"variables", "api_keys", "meta", "sync_state"}
	got, want := tables(t, r.DB, skip...), tables(t, w.DB, skip...)
	for n, rows := range want {
		if !slices.Equal(got[n], rows) {
			t.Errorf("table %s: got %d rows, want %d:\n got %.300v\nwant %.300v", n, len(got[n]), len(rows), got[n], rows)
		}
	}
	if len(want["runs"]) != 2 || len(want["memories"]) != 1 || len(want["pauses"]) != 1 {
		t.Fatalf("the source has %d runs, %d memories, %d pauses; the test wants 2, 1, 1", len(want["runs"]), len(want["memories"]), len(want["pauses"]))
	}
	if keys, _ := r.Keys.List(ctx); len(keys) != 0 {
		t.Errorf("restored %d API keys, want none (they reach the old workspace)", len(keys))
	}
	for _, rel := range []string{"shared.db", "agents/" + paused.AgentID + "/agent.db"} {
		a, _ := store.Open(ctx, filepath.Join(w.Dir, rel), nil)
		b, _ := store.Open(ctx, filepath.Join(r.Dir, rel), nil)
		if ga, gb := tables(t, a), tables(t, b); fmt.Sprint(ga) != fmt.Sprint(gb) || len(ga["leads"]) != 2 {
			t.Errorf("%s: got %v, want %v", rel, gb, ga)
		}
		a.Close()
		b.Close()
	}
	if gf, wf := files(t, r.Dir), files(t, w.Dir); fmt.Sprint(gf) != fmt.Sprint(wf) {
		t.Errorf("files: got %v\nwant %v", gf, wf)
	}
	if gv, _ := r.Variables.List(ctx); true {
		wv, _ := w.Variables.List(ctx)
		if fmt.Sprint(gv) != fmt.Sprint(wv) || len(wv) != 1 {
			t.Errorf("variables: got %v, want %v", gv, wv)
		}
	}
	// The variable resolves, sealed with this machine's key.
	if v, err := r.Variables.Resolve("${GITHUB_TOKEN}"); err != nil || v != "ghp_backupcanary0123456789" {
		t.Errorf("restored variable resolves to %q, %v", v, err)
	}
	// The paused card is still answerable, and the run finishes.
	ps, _ := r.Runs.Pauses(ctx, run.PauseFilter{RunID: paused.ID, Status: "open"})
	if len(ps) != 1 {
		t.Fatalf("restored open pauses = %d, want 1", len(ps))
	}
	fake.Script(llmtest.Text("Sent."))
	if _, err := r.Runs.Answer(ctx, ps[0].ID, json.RawMessage(`{"answers":["Yes"]}`)); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, waittest.Patience)
	defer cancel()
	if done, err := r.Runs.Wait(wctx, paused.ID); err != nil || done.Status != run.Done || done.Output != "Sent." {
		t.Fatalf("answered run = %s %q %v, want done Sent.", done.Status, done.Output, err)
	}
}

// A truncated file, a flipped byte and a wrong passphrase are each refused,
// saying why, and leave the workspaces as they were.
func TestRestoreRefusesDamage(t *testing.T) {
	ctx := context.Background()
	fake := llmtest.New(t)
	src := servedHome(t, fake)
	w, _ := filled(t, src, fake)
	path := filepath.Join(t.TempDir(), "good")
	f, _ := os.Create(path)
	if _, err := backups(t, src, w.Info().ID).Backup(ctx, backupPass, "test", f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	good, _ := os.ReadFile(path)
	dst := servedHome(t, fake)
	wsDir := filepath.Join(dst.DataDir(), "workspaces")
	entries := func() int { e, _ := os.ReadDir(wsDir); return len(e) }
	before, n := dst.List(), entries()
	flipped := slices.Clone(good)
	flipped[len(flipped)*2/3] ^= 0x40
	for _, c := range []struct {
		name, pass, want string
		body             []byte
	}{
		{"truncated", backupPass, "damaged", good[:len(good)-100]},
		{"flipped byte", backupPass, "damaged", flipped},
		{"wrong passphrase", "not the passphrase", "passphrase does not open", good},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "bad")
			os.WriteFile(p, c.body, 0o600)
			_, err := dst.Restore(ctx, p, c.pass, "")
			if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an invalid-input error saying %q", err, c.want)
			}
			if fmt.Sprint(dst.List()) != fmt.Sprint(before) || entries() != n {
				t.Fatalf("workspaces changed: %v (%d entries), want %v (%d)", dst.List(), entries(), before, n)
			}
		})
	}
}

func TestDeleteWorkspace(t *testing.T) {
	ctx := context.Background()
	fake := llmtest.New(t)
	h := servedHome(t, fake)
	first := h.Current()
	if err := h.Delete(ctx, first, "Personal"); !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("deleting the last workspace: got %v, want a conflict", err)
	}
	info, _ := h.Create(ctx, "Doomed")
	h.Switch(info.ID)
	w, paused := filled(t, h, fake)
	plain, _, _ := w.Keys.Create(ctx, "mcp")
	if _, _, ok := h.Authenticate(ctx, plain); !ok {
		t.Fatal("the new key does not authenticate")
	}
	if err := h.Delete(ctx, info.ID, "doomed"); !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("a wrong confirmation: got %v, want invalid", err)
	}
	if err := h.Delete(ctx, info.ID, "Doomed"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Workspace(info.ID); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("the deleted workspace is still open: %v", err)
	}
	if _, _, ok := h.Authenticate(ctx, plain); ok {
		t.Error("its API key still authenticates")
	}
	if _, err := os.Stat(w.Dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("its folder is still there: %v", err)
	}
	if h.Current() != first {
		t.Errorf("current = %s, want the one left, %s", h.Current(), first)
	}
	if e, _ := os.ReadDir(filepath.Join(h.DataDir(), "workspaces")); len(e) != 1 {
		t.Errorf("workspaces folder holds %d entries, want 1", len(e))
	}
	_ = paused
}

// A schedule turned on backs up when none was made for a day, not again
// before, keeps the last N; its passphrase never goes into a backup.
func TestScheduledBackup(t *testing.T) {
	ctx := context.Background()
	h := open(t, t.TempDir())
	defer h.Close()
	id, folder := h.Current(), t.TempDir()
	if _, err := backups(t, h, id).SetSchedule(ctx, backup.ScheduleChange{Enabled: true, Folder: folder, Keep: 2}); !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("on without a passphrase: got %v, want invalid", err)
	}
	s, err := backups(t, h, id).SetSchedule(ctx, backup.ScheduleChange{Enabled: true, Folder: folder, Keep: 2, Passphrase: backupPass})
	if err != nil || !s.HasPassphrase {
		t.Fatalf("schedule = %+v, %v", s, err)
	}
	now := time.Now()
	for i, c := range []struct {
		at   time.Time
		made bool
	}{{now, true}, {now.Add(time.Hour), false}, {now.Add(25 * time.Hour), true}, {now.Add(50 * time.Hour), true}} {
		made, err := backups(t, h, id).IfDue(ctx, "test", c.at)
		if err != nil || made != c.made {
			t.Fatalf("check %d: made %v, %v; want %v", i, made, err, c.made)
		}
	}
	entries, _ := os.ReadDir(folder)
	if len(entries) != 2 {
		t.Fatalf("folder holds %d backups, want the last 2", len(entries))
	}
	dst := open(t, t.TempDir())
	defer dst.Close()
	info, err := dst.Restore(ctx, filepath.Join(folder, entries[1].Name()), backupPass, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := backups(t, dst, info.ID).Schedule(ctx); got.HasPassphrase || got.Enabled {
		t.Errorf("the restored workspace has the schedule %+v; its passphrase must not travel", got)
	}
}

// A copy restored beside its original starts with its schedules and
// triggers paused, and the original keeps its webhook URL: the copy's
// trigger gets a new token. Restored elsewhere, automations stay as they
// were and the URL keeps working.
func TestRestoreBesideOriginal(t *testing.T) {
	ctx := context.Background()
	fake := llmtest.New(t)
	h := servedHome(t, fake)
	w, _ := h.Workspace(h.Current())
	a, err := w.Agents.Create(ctx, agent.NewAgent{Name: "Ada", BoxID: firstBox(t, w)})
	if err != nil {
		t.Fatal(err)
	}
	token, _, err := w.Triggers.Create(ctx, trigger.NewTrigger{AgentID: a.ID, Name: "Orders", Instruction: "File it."})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Schedules.Create(ctx, schedule.NewSchedule{AgentID: a.ID, Name: "Digest", Instruction: "Post it.",
		Spec: schedule.Spec{Kind: schedule.KindCron, Cron: "0 9 * * *"}}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "b.rerun-backup")
	f, _ := os.Create(path)
	if _, err := backups(t, h, w.Info().ID).Backup(ctx, backupPass, "test", f); err != nil {
		t.Fatal(err)
	}
	f.Close()

	enabled := func(w *workspace.Workspace) (schedules, triggers int) {
		ss, _ := w.Schedules.List(ctx, "")
		ts, _ := w.Triggers.List(ctx, "")
		for _, s := range ss {
			if s.Enabled {
				schedules++
			}
		}
		for _, t := range ts {
			if t.Enabled {
				triggers++
			}
		}
		return schedules, triggers
	}

	info, err := h.Restore(ctx, path, backupPass, "")
	if err != nil {
		t.Fatal(err)
	}
	cp, _ := h.Workspace(info.ID)
	if s, tr := enabled(cp); s != 0 || tr != 0 {
		t.Errorf("copy beside its original: %d schedules, %d triggers enabled, want all paused", s, tr)
	}
	if s, tr := enabled(w); s != 1 || tr != 1 {
		t.Errorf("original: %d schedules, %d triggers enabled, want both still on", s, tr)
	}
	if owns, _ := cp.Triggers.Owns(ctx, token); owns {
		t.Error("the copy still answers the original's webhook token")
	}
	if owner, ok, _ := h.TriggerOwner(ctx, token); !ok || owner != w {
		t.Errorf("the token reaches %v, want the original workspace", owner)
	}

	other := servedHome(t, fake)
	info, err = other.Restore(ctx, path, backupPass, "")
	if err != nil {
		t.Fatal(err)
	}
	el, _ := other.Workspace(info.ID)
	if s, tr := enabled(el); s != 1 || tr != 1 {
		t.Errorf("restored elsewhere: %d schedules, %d triggers enabled, want both on as they were", s, tr)
	}
	if owns, _ := el.Triggers.Owns(ctx, token); !owns {
		t.Error("restored elsewhere, the webhook URL stopped working")
	}
}
