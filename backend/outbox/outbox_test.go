package outbox_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/outbox"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/internal/mailpittest"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

const (
	agentID  = "ag_1"
	runID    = "rn_1"
	appURL   = "http://127.0.0.1:7777"
	password = "hunter2-smtp-pass"
	// leaked is a variable's value an agent wrote in its card: no mail or
	// hook may carry it.
	leaked = "sk-live-4f9a8b7c6d5e"
)

type fixture struct {
	db     *store.DB
	vars   *secret.Variables
	notes  *notify.Service
	out    *outbox.Service
	bus    *event.Bus
	pauses int
}

// open opens (creating) the workspace database at path with the test's
// agent, run and variables, and an outbox over it (not started).
func open(t *testing.T, path string, key []byte, d outbox.Deps, c outbox.Config) *fixture {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, path, store.WorkspaceMigrations())
	if err != nil {
		t.Fatal(err)
	}
	now := store.FormatTime(time.Now())
	for _, q := range []string{
		`INSERT INTO boxes (id, name, position, created_at) VALUES ('bx_1', 'Box', 0, ?) ON CONFLICT DO NOTHING`,
		`INSERT INTO agents (id, name, handle, box_id, created_at, updated_at) VALUES ('ag_1', 'Deploy bot', 'deploy', 'bx_1', ?1, ?1) ON CONFLICT DO NOTHING`,
		`INSERT INTO sessions (id, agent_id, kind, created_at, updated_at) VALUES ('se_1', 'ag_1', 'schedule', ?1, ?1) ON CONFLICT DO NOTHING`,
		`INSERT INTO runs (id, agent_id, session_id, source, status, input, created_at) VALUES ('rn_1', 'ag_1', 'se_1', 'schedule', 'paused', 'go', ?1) ON CONFLICT DO NOTHING`,
	} {
		if _, err := db.ExecContext(ctx, q, now); err != nil {
			t.Fatal(q, err)
		}
	}
	box, err := secret.NewBox(key)
	if err != nil {
		t.Fatal(err)
	}
	bus := &event.Bus{}
	vars, err := secret.NewVariables(db, box, "ws_test", bus)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"SMTP_PASSWORD": password, "DEPLOY_TOKEN": leaked} {
		if _, err := vars.Set(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	notes := notify.New(db, "ws_test", bus)
	d.DB, d.Workspace, d.Bus, d.Notify, d.Vars = db, "ws_test", bus, notes, vars
	if d.AppURL == "" {
		d.AppURL = appURL
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.NewTextHandler(tlog{t}, nil))
	}
	out := outbox.New(d, c)
	notes.SetPlanner(out)
	f := &fixture{db: db, vars: vars, notes: notes, out: out, bus: bus}
	t.Cleanup(func() { out.Close(); db.Close() })
	return f
}

// close stops the outbox and closes the database (as a quitting app does).
func (f *fixture) close() {
	f.out.Close()
	f.db.Close()
}

func newFixture(t *testing.T, d outbox.Deps, c outbox.Config) *fixture {
	key := make([]byte, 32)
	rand.Read(key)
	return open(t, filepath.Join(t.TempDir(), "workspace.db"), key, d, c)
}

// card raises a pause of kind with request (JSON) and its notification.
func (f *fixture) card(t *testing.T, kind, request, title, body string, automated bool) notify.Notification {
	t.Helper()
	ctx := context.Background()
	f.pauses++
	id := "pa_" + hex.EncodeToString([]byte{byte(f.pauses)}) + strings.ReplaceAll(t.Name(), "/", "_")
	// One open pause per run: settle the last one first.
	if _, err := f.db.ExecContext(ctx, `UPDATE pauses SET status = 'answered' WHERE run_id = ?`, runID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.ExecContext(ctx, `INSERT INTO pauses (id, run_id, agent_id, session_id, kind, status, request, automated, created_at)
		VALUES (?, ?, ?, 'se_1', ?, 'open', ?, ?, ?)`, id, runID, agentID, kind, request, automated, store.FormatTime(time.Now())); err != nil {
		t.Fatal(err)
	}
	n, err := f.notes.Notify(ctx, notify.Input{AgentID: agentID, RunID: runID, PauseID: id, Kind: kind, Title: title, Body: body, Automated: automated})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (f *fixture) setEmail(t *testing.T, e outbox.Email) {
	t.Helper()
	if _, err := f.out.SetEmail(context.Background(), e); err != nil {
		t.Fatal(err)
	}
}

// row reads the outbox row of notification n on channel.
func (f *fixture) row(t *testing.T, n notify.Notification, channel string) (id, status string, attempts int, lastErr string) {
	t.Helper()
	err := f.db.QueryRowContext(context.Background(), `SELECT id, status, attempts, last_error FROM outbox WHERE notification_id = ? AND channel = ?`,
		n.ID, channel).Scan(&id, &status, &attempts, &lastErr)
	if err == sql.ErrNoRows {
		return "", "", 0, ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return id, status, attempts, lastErr
}

const questionCard = `{"questions":[{"question":"Which region do I deploy to? The token is sk-live-4f9a8b7c6d5e","options":["eu-west-1","us-east-1"]}]}`

// A card from an automated run arrives by mail through a real SMTP server,
// with auth: subject, body (agent, question, suggested answers, link),
// headers (Message-ID from the send id recorded before sending), and no
// secret value anywhere.
func TestMailArrives(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{Users: map[string]string{"rerun": password}})
	f := newFixture(t, outbox.Deps{}, outbox.Config{})
	f.setEmail(t, outbox.Email{Host: "127.0.0.1", Port: mp.Port, TLS: outbox.NoTLS, User: "rerun", Password: "${SMTP_PASSWORD}",
		From: "Rerun <rerun@example.com>", To: "me@example.com"})
	f.out.Start()
	n := f.card(t, notify.Question, questionCard, "Has a question for you", "Deploy with DEPLOY_TOKEN="+leaked, true)

	waittest.Until(t, "the mail arrives", func() bool { return len(mp.Messages(t)) == 1 })
	sum := mp.Messages(t)[0]
	m := mp.Message(t, sum.ID)
	if m.Subject != "[Rerun] Deploy bot: Has a question for you" {
		t.Errorf("subject %q", m.Subject)
	}
	link := appURL + "/?notification=" + n.ID + "&workspace=ws_test"
	for _, want := range []string{"Deploy bot", "Which region do I deploy to?", "Suggested answers: eu-west-1 / us-east-1", link, "started on its own"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("body lacks %q:\n%s", want, m.Text)
		}
	}
	if strings.Contains(m.Text, leaked) || strings.Contains(m.Subject, leaked) {
		t.Errorf("the mail carries a secret value:\n%s", m.Text)
	}
	if m.From.Address != "rerun@example.com" || len(m.To) != 1 || m.To[0].Address != "me@example.com" {
		t.Errorf("from %v to %v", m.From, m.To)
	}
	// The server has the mail before the outbox hears it accepted.
	waittest.Until(t, "the delivery is marked sent", func() bool {
		_, status, _, _ := f.row(t, n, outbox.ChannelEmail)
		return status != outbox.Sending
	})
	id, status, attempts, _ := f.row(t, n, outbox.ChannelEmail)
	if status != outbox.Sent || attempts != 1 {
		t.Errorf("outbox row %s: status %s after %d attempts, want sent after 1", id, status, attempts)
	}
	if sum.MessageID != outbox.MessageID(id) {
		t.Errorf("Message-ID %q, want %q (from the send id)", sum.MessageID, outbox.MessageID(id))
	}
	h := mp.Headers(t, sum.ID)
	for k, want := range map[string]string{"Auto-Submitted": "auto-generated", "X-Rerun-Notification": n.ID, "X-Rerun-Kind": "question", "X-Rerun-Link": link} {
		if got := h[k]; len(got) != 1 || got[0] != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	// A run the person started stays in the app by default: no second mail.
	mine := f.card(t, notify.Question, questionCard, "Has a question for you", "", false)
	if id, _, _, _ := f.row(t, mine, outbox.ChannelEmail); id != "" {
		t.Errorf("a card from the person's own run was queued for email (%s)", id)
	}
}

// STARTTLS and implicit TLS, each against a server that requires it, with
// a test certificate; the test button's path (TestEmail).
func TestMailTLS(t *testing.T) {
	for _, mode := range []string{outbox.StartTLS, outbox.TLS} {
		t.Run(mode, func(t *testing.T) {
			mp := mailpittest.Start(t, mailpittest.Options{TLS: mode, Users: map[string]string{"rerun": password}})
			f := newFixture(t, outbox.Deps{TLS: mp.TLSConfig()}, outbox.Config{})
			e := outbox.Email{Host: "127.0.0.1", Port: mp.Port, TLS: mode, User: "rerun", Password: "${SMTP_PASSWORD}",
				From: "rerun@example.com", To: "me@example.com"}
			if err := f.out.TestEmail(context.Background(), e); err != nil {
				t.Fatal(err)
			}
			list := mp.Messages(t)
			if len(list) != 1 || list[0].Subject != "[Rerun] Rerun: Test email" {
				t.Fatalf("messages %+v", list)
			}
			// A client that does not trust the certificate is refused, and says so.
			plain := newFixture(t, outbox.Deps{}, outbox.Config{})
			err := plain.out.TestEmail(context.Background(), e)
			if err == nil || !strings.Contains(err.Error(), "certificate") {
				t.Errorf("untrusted certificate: %v", err)
			}
		})
	}
}

// A refusing server: its real answer is what the person sees, from the
// test button and in the panel's deliveries, and a delivery that keeps
// failing is given up after its attempts, with backoff between them.
func TestMailRefused(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{Users: map[string]string{"rerun": "another password"}})
	picky := mailpittest.Start(t, mailpittest.Options{Args: []string{"--smtp-allowed-recipients", "^allowed@example\\.com$"}})
	f := newFixture(t, outbox.Deps{}, outbox.Config{Backoff: 20 * time.Millisecond, Attempts: 3})
	ctx := context.Background()
	e := outbox.Email{Host: "127.0.0.1", Port: mp.Port, TLS: outbox.NoTLS, User: "rerun", Password: "${SMTP_PASSWORD}",
		From: "rerun@example.com", To: "allowed@example.com"}
	err := f.out.TestEmail(ctx, e)
	if err == nil || !strings.Contains(err.Error(), "535") {
		t.Fatalf("wrong password: %v, want the server's 535 answer", err)
	}
	if strings.Contains(err.Error(), password) {
		t.Errorf("the error carries the password: %v", err)
	}
	t.Logf("wrong password: %v", err)

	e.User, e.Password = "", ""
	e.Port, e.To = picky.Port, "someone@example.com"
	err = f.out.TestEmail(ctx, e)
	if err == nil || !strings.Contains(err.Error(), "550") {
		t.Fatalf("refused recipient: %v, want the server's 550 answer", err)
	}
	t.Logf("refused recipient: %v", err)

	closed := mailpittest.FreePort(t)
	e.Port = closed
	if err := f.out.TestEmail(ctx, e); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("no server: %v", err)
	}

	e.Port = picky.Port
	f.setEmail(t, e)
	f.out.Start()
	n := f.card(t, notify.Approval, `{"title":"Ship","items":[{"id":"1","title":"Run the migration","kind":"command","detail":"make migrate"}]}`,
		"Needs your approval for 1 action", "", true)
	waittest.Until(t, "the delivery fails for good", func() bool {
		_, status, _, _ := f.row(t, n, outbox.ChannelEmail)
		return status == outbox.Failed
	})
	list, err := f.out.Deliveries(ctx, outbox.ListOptions{Problems: true})
	if err != nil || len(list) != 1 {
		t.Fatalf("problems %+v, %v", list, err)
	}
	if d := list[0]; d.Attempts != 3 || !strings.Contains(d.LastError, "550") || d.NotificationID != n.ID {
		t.Errorf("failed delivery %+v", d)
	}
	// Retry makes it due again; it fails again the same way.
	if err := f.out.Retry(ctx, list[0].ID); err != nil {
		t.Fatal(err)
	}
	waittest.Until(t, "the retried delivery fails again", func() bool {
		_, status, attempts, _ := f.row(t, n, outbox.ChannelEmail)
		return status == outbox.Failed && attempts == 3
	})
	if len(mp.Messages(t))+len(picky.Messages(t)) != 0 {
		t.Errorf("a refused mail arrived")
	}
}

func TestEmailCheck(t *testing.T) {
	has := func(name string) bool { return name == "SMTP_PASSWORD" }
	ok := outbox.Email{Host: "smtp.example.com", User: "me", Password: "${SMTP_PASSWORD}", From: "a@example.com", To: "b@example.com, c@example.com"}
	e := ok
	if err := e.Check(has); err != nil || e.Port != 587 || e.TLS != outbox.StartTLS {
		t.Fatalf("defaults: %+v %v", e, err)
	}
	for _, tc := range []struct {
		name string
		edit func(*outbox.Email)
		want string
	}{
		{"none to a remote host", func(e *outbox.Email) { e.TLS = "none" }, "only for a server on this computer"},
		{"clear password", func(e *outbox.Email) { e.Password = "hunter2" }, "must be a workspace variable"},
		{"missing variable", func(e *outbox.Email) { e.Password = "${NOPE}" }, "no workspace variable NOPE"},
		{"bad mode", func(e *outbox.Email) { e.TLS = "ssl3" }, `TLS mode "ssl3" is unknown`},
		{"bad port", func(e *outbox.Email) { e.Port = 70000 }, "between 1 and 65535"},
		{"host with scheme", func(e *outbox.Email) { e.Host = "smtp://x" }, "without a scheme"},
		{"bad from", func(e *outbox.Email) { e.From = "nobody" }, "from address"},
		{"bad to", func(e *outbox.Email) { e.To = "" }, "to address"},
		{"password without user", func(e *outbox.Email) { e.User = "" }, "needs a user"},
	} {
		e := ok
		tc.edit(&e)
		if err := e.Check(has); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	local := outbox.Email{Host: "localhost", TLS: "none", From: "a@example.com", To: "b@example.com"}
	if err := local.Check(has); err != nil || local.Port != 25 {
		t.Errorf("none to localhost: %v", err)
	}
	off := outbox.Email{Host: " ", From: "x"}
	if err := off.Check(has); err != nil || off != (outbox.Email{}) {
		t.Errorf("off: %+v %v", off, err)
	}
}

// tlog writes the outbox's log to the test's.
type tlog struct{ t *testing.T }

func (w tlog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
