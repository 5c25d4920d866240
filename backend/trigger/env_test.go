package trigger_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/box"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/trigger"
)

// triggerRuns adapts the real run service, as the wiring does.
type triggerRuns struct{ *run.Service }

func (r triggerRuns) NewSession(ctx context.Context, agentID string) (string, error) {
	s, err := r.Service.NewSession(ctx, agentID, run.SourceTrigger, "")
	return s.ID, err
}

func (r triggerRuns) StartManyTx(ctx context.Context, tx *sql.Tx, agentID, sessionID, from string, inputs []string) ([]string, error) {
	runs, err := r.Service.StartManyTx(ctx, tx, agentID, sessionID, run.SourceTrigger, inputs, run.StartOptions{From: from})
	ids := make([]string, len(runs))
	for i, x := range runs {
		ids[i] = x.ID
	}
	return ids, err
}

func (r triggerRuns) Started(agentID, sessionID, runID string) {
	r.Service.Started(run.Run{ID: runID, AgentID: agentID, SessionID: sessionID})
}

func (r triggerRuns) Find(ctx context.Context, sessionID, marker string) (string, error) {
	runs, err := r.Service.List(ctx, run.ListOptions{SessionID: sessionID, Limit: 1000})
	for _, x := range runs {
		if strings.Contains(x.Input, marker) {
			return x.ID, nil
		}
	}
	return "", err
}

// vars is the fake of the workspace's variables.
type vars struct {
	mu sync.Mutex
	m  map[string]string
}

func (v *vars) Lookup(name string) (string, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	s, ok := v.m[name]
	return s, ok
}

func (v *vars) set(name, value string) {
	v.mu.Lock()
	v.m[name] = value
	v.mu.Unlock()
}

func (v *vars) unset(name string) {
	v.mu.Lock()
	delete(v.m, name)
	v.mu.Unlock()
}

// clock is the fake clock of the tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// logs collects what the service logs.
type logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// env is a workspace with one agent, the real run service (queuing only),
// the trigger service behind a real HTTP server, and fake variables.
type env struct {
	t     testing.TB
	db    *store.DB
	path  string
	agent string
	clock *clock
	runs  *run.Service
	vars  *vars
	logs  *logs
	svc   *trigger.Service
	srv   *httptest.Server
	// serving is the service behind srv (swapped by a "restart").
	serving atomic.Pointer[trigger.Service]
}

func newEnv(t testing.TB) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "workspace.db")
	db, err := store.Open(ctx, path, store.WorkspaceMigrations())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b, err := box.NewService(db, "ws", nil).Create(ctx, "Main")
	if err != nil {
		t.Fatal(err)
	}
	agents := agent.NewService(db, filepath.Join(dir, "agents"), "ws", nil)
	a, err := agents.Create(ctx, agent.NewAgent{Name: "Ada", BoxID: b.ID})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, db: db, path: path, agent: a.ID, clock: &clock{t: time.Now().UTC().Truncate(time.Second)},
		vars: &vars{m: map[string]string{}}, logs: &logs{}}
	e.runs = run.NewService(run.Deps{DB: db, Workspace: "ws", Agents: agents, Boxes: box.NewService(db, "ws", nil)}, run.Config{Now: e.clock.Now})
	e.svc = e.service(db)
	e.use(e.svc)
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.serving.Load().Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(e.srv.Close)
	return e
}

// use puts svc behind the HTTP server.
func (e *env) use(svc *trigger.Service) { e.serving.Store(svc) }

// service is another trigger service over db: the process after a restart.
func (e *env) service(db *store.DB) *trigger.Service {
	log := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return trigger.NewService(trigger.Deps{DB: db, Workspace: "ws", Runs: triggerRuns{e.runs}, Secrets: e.vars, Logger: log},
		trigger.Config{Now: e.clock.Now})
}

func (e *env) create(in trigger.NewTrigger) (string, trigger.Trigger) {
	e.t.Helper()
	if in.AgentID == "" {
		in.AgentID = e.agent
	}
	if in.Name == "" {
		in.Name = "New order"
	}
	if in.Instruction == "" {
		in.Instruction = "Add the order to the sheet."
	}
	token, t, err := e.svc.Create(context.Background(), in)
	if err != nil {
		e.t.Fatal(err)
	}
	return token, t
}

// response is what a call got back.
type response struct {
	status int
	header http.Header
	body   map[string]any
}

func (r response) str(key string) string { s, _ := r.body[key].(string); return s }

// call sends method /hooks/token with body and headers (name, value pairs).
func (e *env) call(method, token, body string, headers ...string) response {
	e.t.Helper()
	return e.callURL(method, e.srv.URL+"/hooks/"+token, body, headers...)
}

func (e *env) callURL(method, url, body string, headers ...string) response {
	e.t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := response{status: res.StatusCode, header: res.Header, body: map[string]any{}}
	json.Unmarshal(raw, &out.body)
	return out
}

// sessionRuns lists the runs of a trigger's session.
func (e *env) sessionRuns(t trigger.Trigger) []run.Run {
	e.t.Helper()
	list, err := e.runs.List(context.Background(), run.ListOptions{SessionID: t.SessionID})
	if err != nil {
		e.t.Fatal(err)
	}
	return list
}

func (e *env) deliveries(id string) []trigger.Delivery {
	e.t.Helper()
	list, err := e.svc.Deliveries(context.Background(), id, 100)
	if err != nil {
		e.t.Fatal(err)
	}
	return list
}
