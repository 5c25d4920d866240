//go:build linux

package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/connector/connectortest"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// TestServeChaosChild is the `rerun serve` that TestServeChaos kills: this
// test binary running main, as the built binary does.
func TestServeChaosChild(t *testing.T) {
	dir := os.Getenv("RERUN_SERVE_CHAOS_DIR")
	if dir == "" {
		t.Skip("run by TestServeChaos")
	}
	os.Args = []string{"rerun", "serve", "--port", "0", "--data-dir", dir}
	main() // until killed
}

var (
	serveURL  = regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?token=[0-9a-f]+`)
	serveJob  = regexp.MustCompile(`job (j\d+)`)
	markInput = regexp.MustCompile(`"message":\s*"(j\d+)"`)
)

// serveProc is one `rerun serve` process and where it listens.
type serveProc struct {
	cmd   *exec.Cmd
	base  string // http://127.0.0.1:PORT
	token string
}

// TestServeChaos SIGKILLs a real `rerun serve` at random moments while
// webhooks arrive and each run they start calls a tool of a stdio MCP
// server with a side effect (a line in a marker file), restarting it each
// time. Every webhook answered 2xx becomes exactly one run (the sender
// retries the others with the same idempotency key, as webhook senders
// do); each side effect happens at most once, and the calls a kill
// interrupted are reported to the model as interrupted; no server process
// outlives the app; every database passes integrity_check.
func TestServeChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes for a while")
	}
	const jobs, minKills = 60, 10
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	// Named in the server's env, the marker file is one its sandbox lets it write.
	marks := filepath.Join(dir, "marks")
	if err := os.WriteFile(marks, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	serverMark := randomHex(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}

	fake := llmtest.New(t)
	fake.SetFallback(func(req llmtest.Request) llmtest.Reply {
		last := req.Messages[len(req.Messages)-1]
		if len(last.ToolResults) > 0 {
			return llmtest.Text("done")
		}
		m := serveJob.FindStringSubmatch(last.Text)
		if m == nil {
			return llmtest.Text("no job")
		}
		nap := 0.2
		if m[1][len(m[1])-1] == '3' { // one in ten calls takes long, so a kill finds it running
			nap = 3
		}
		return llmtest.Tools(llmtest.ToolCall{ID: "c" + m[1], Name: "chaos__mark", Args: fmt.Sprintf(`{"message":%q,"seconds":%v}`, m[1], nap)})
	})

	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "ANTHROPIC_") && !strings.HasPrefix(k, "OPENAI_") && k != "OLLAMA_HOST" {
			env = append(env, kv)
		}
	}
	env = append(env, "RERUN_SERVE_CHAOS_DIR="+data, "RERUN_KEYCHAIN=off", "RERUN_ONBOARDING=off",
		"OPENAI_API_KEY=test", "OPENAI_BASE_URL="+fake.OpenAIURL())
	logFile, err := os.OpenFile(filepath.Join(dir, "serve.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()

	var mu sync.Mutex // guards cur
	var cur *serveProc
	start := func() {
		t.Helper()
		cmd := exec.Command(exe, "-test.run=^TestServeChaosChild$")
		cmd.Env = env
		cmd.Stderr = logFile
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		urls := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if u := serveURL.FindString(sc.Text()); u != "" {
					urls <- u
				}
			}
			io.Copy(io.Discard, stdout)
		}()
		u, err := url.Parse(waittest.Recv(t, "rerun serve to print its URL", urls))
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		cur = &serveProc{cmd: cmd, base: "http://" + u.Host, token: u.Query().Get("token")}
		mu.Unlock()
	}
	current := func() *serveProc { mu.Lock(); defer mu.Unlock(); return cur }
	kill := func() {
		p := current()
		p.cmd.Process.Signal(syscall.SIGKILL)
		p.cmd.Wait()
		// The MCP servers die with the app (Pdeathsig), before it is back.
		connectortest.WaitNoProcesses(t, "CHAOS_SERVER_MARK", serverMark)
	}
	call := func(method, path string, body, out any) {
		t.Helper()
		p := current()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, p.base+path, rd)
		req.Header.Set("Authorization", "Bearer "+p.token)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode/100 != 2 {
			t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
		}
		if out != nil {
			if err := json.Unmarshal(b, out); err != nil {
				t.Fatalf("%s %s: %v in %s", method, path, err, b)
			}
		}
	}

	start()
	defer func() {
		if p := current(); p.cmd.ProcessState == nil {
			p.cmd.Process.Signal(syscall.SIGKILL)
			p.cmd.Wait()
		}
	}()

	// An agent with a stdio MCP server whose mark tool is the side effect,
	// and a webhook trigger that starts its runs.
	var list struct{ Current string }
	call("GET", "/api/workspaces", nil, &list)
	ws := "/api/workspaces/" + list.Current
	var board struct{ Boxes []struct{ ID string } }
	call("GET", ws+"/board", nil, &board)
	var ag struct{ ID string }
	call("POST", ws+"/agents", map[string]any{"name": "Hooks", "box_id": board.Boxes[0].ID, "capabilities": []string{"connectors"}}, &ag)
	var app struct {
		ID, Status string
		Tools      []struct {
			AgentName string `json:"agent_name"`
			State     string
		}
	}
	call("POST", ws+"/agents/"+ag.ID+"/apps/custom", map[string]any{"name": "Chaos", "command": exe,
		"env": map[string]string{connectortest.StdioEnv: "1", connectortest.CallLogEnv: marks, "CHAOS_SERVER_MARK": serverMark}}, &app)
	call("POST", ws+"/apps/"+app.ID+"/test", nil, &app)
	approved := false
	for _, tl := range app.Tools {
		approved = approved || tl.AgentName == "chaos__mark" && tl.State == "approved"
	}
	if !approved {
		t.Fatalf("the app is %s with tools %+v, want chaos__mark approved", app.Status, app.Tools)
	}
	var trig struct{ URL string }
	call("POST", ws+"/agents/"+ag.ID+"/triggers", map[string]any{"name": "Jobs", "instruction": "Do the job.", "rate_limit": 100000}, &trig)
	hook, err := url.Parse(trig.URL)
	if err != nil {
		t.Fatal(err)
	}

	// Senders: each job is posted until it is answered 2xx, through every
	// kill, with the same idempotency key.
	var amu sync.Mutex
	accepted := map[string]string{} // job → run id
	duplicates, retries := 0, 0
	queue := make(chan string, jobs)
	stop := make(chan struct{})
	var senders sync.WaitGroup
	send := func(job string) {
		for {
			select {
			case <-stop:
				return
			default:
			}
			req, _ := http.NewRequest("POST", current().base+hook.Path, strings.NewReader(`{"text":"job `+job+`"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", "delivery-"+job)
			res, err := http.DefaultClient.Do(req)
			if err == nil {
				var a struct {
					RunID     string `json:"run_id"`
					Duplicate bool   `json:"duplicate"`
				}
				ok := res.StatusCode/100 == 2 && json.NewDecoder(res.Body).Decode(&a) == nil
				res.Body.Close()
				if ok {
					amu.Lock()
					accepted[job] = a.RunID
					if a.Duplicate {
						duplicates++
					}
					amu.Unlock()
					return
				}
			}
			amu.Lock()
			retries++
			amu.Unlock()
			time.Sleep(50 * time.Millisecond) // the app is restarting: try again, as a sender does
		}
	}
	for range 4 {
		senders.Add(1)
		go func() {
			defer senders.Done()
			for job := range queue {
				send(job)
			}
		}()
	}
	defer func() { close(stop); senders.Wait() }()

	rng := mrand.New(mrand.NewPCG(19, uint64(time.Now().UnixNano())))
	began := time.Now()
	var restarts time.Duration
	released, kills := 0, 0
	for released < jobs || kills < minKills {
		for n := 3 + rng.IntN(8); n > 0 && released < jobs; n-- {
			queue <- fmt.Sprintf("j%03d", released)
			released++
		}
		time.Sleep(time.Duration(300+rng.IntN(1500)) * time.Millisecond) // the random moment
		kill()
		kills++
		t0 := time.Now()
		start()
		restarts += time.Since(t0)
	}
	close(queue)

	acceptedCount := func() int { amu.Lock(); defer amu.Unlock(); return len(accepted) }
	waittest.Progress(t, "every webhook answered 2xx", waittest.Patience, func() (int, bool) {
		n := acceptedCount()
		return n, n == jobs
	})
	dbs, _ := filepath.Glob(filepath.Join(data, "workspaces", "*", "workspace.db"))
	if len(dbs) != 1 {
		t.Fatalf("workspace databases %v, want one", dbs)
	}
	db, err := sql.Open("sqlite", "file:"+dbs[0]+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := db.QueryRow(q, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	waittest.Progress(t, "every run to end", waittest.Patience, func() (int, bool) {
		n := count(`SELECT count(*) FROM runs WHERE agent_id = ? AND status IN ('done', 'failed', 'cancelled')`, ag.ID)
		return n, n == count(`SELECT count(*) FROM runs WHERE agent_id = ?`, ag.ID)
	})
	p := current()
	p.cmd.Process.Signal(os.Interrupt)
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("rerun serve did not stop cleanly on SIGINT: %v", err)
	}
	connectortest.WaitNoProcesses(t, "CHAOS_SERVER_MARK", serverMark)
	elapsed := time.Since(began)

	// Each accepted webhook is one run, the one its answer named.
	runsOf := map[string][]string{}
	statuses := map[string]int{}
	rows, err := db.Query(`SELECT id, input, status FROM runs WHERE agent_id = ?`, ag.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, input, status string
		rows.Scan(&id, &input, &status)
		statuses[status]++
		if m := serveJob.FindStringSubmatch(input); m != nil {
			runsOf[m[1]] = append(runsOf[m[1]], id)
		} else {
			t.Errorf("run %s has no job in its input %q", id, input)
		}
	}
	rows.Close()
	lostRuns, doubledRuns := 0, 0
	for job, runID := range accepted {
		switch got := runsOf[job]; {
		case len(got) == 0:
			lostRuns++
			t.Errorf("webhook %s was accepted (run %s) but no run has it", job, runID)
		case len(got) > 1:
			doubledRuns++
			t.Errorf("webhook %s became %d runs %v", job, len(got), got)
		case got[0] != runID:
			t.Errorf("webhook %s: the answer named run %s, the run is %s", job, runID, got[0])
		}
	}
	if statuses["done"] != jobs {
		t.Errorf("run statuses %v, want all %d done", statuses, jobs)
	}

	// Each side effect at most once; each the model heard ran is there; the
	// rest were reported interrupted.
	marked := map[string]int{}
	for _, l := range connectortest.CallLog(t, marks) {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "mark" { // mark <job> <pid>
			marked[f[1]]++
		}
	}
	doubled := 0
	for job, n := range marked {
		if n > 1 {
			doubled++
			t.Errorf("side effect of %s happened %d times", job, n)
		}
	}
	done, interrupted, calls := 0, 0, map[string]int{}
	steps, err := db.Query(`SELECT st.kind, st.data FROM steps st JOIN runs r ON r.id = st.run_id
		WHERE r.agent_id = ? AND st.kind IN ('tool_call', 'tool_result') ORDER BY st.run_id, st.seq`, ag.ID)
	if err != nil {
		t.Fatal(err)
	}
	jobOfCall := map[string]string{}
	for steps.Next() {
		var kind, raw string
		steps.Scan(&kind, &raw)
		switch kind {
		case run.StepToolCall:
			var c run.ToolCall
			json.Unmarshal([]byte(raw), &c)
			if m := markInput.FindStringSubmatch(string(c.Input)); m != nil {
				jobOfCall[c.ID] = m[1]
				calls[m[1]]++
			}
		case run.StepToolResult:
			var res run.ToolResultData
			json.Unmarshal([]byte(raw), &res)
			job, ok := jobOfCall[res.ID]
			switch {
			case !ok:
			case strings.HasPrefix(res.Output, "interrupted"):
				interrupted++
			case res.Output == "marked "+job:
				done++
				if marked[job] != 1 {
					t.Errorf("job %s: the model heard it ran, but its side effect is missing", job)
				}
			default:
				t.Errorf("job %s: the tool answered %q", job, res.Output)
			}
		}
	}
	steps.Close()
	for job := range accepted {
		if calls[job] == 0 {
			t.Logf("job %s: its run made no call", job)
		}
	}
	for job, n := range calls {
		if n != 1 {
			t.Errorf("job %s: %d tool calls recorded, want one (never run again)", job, n)
		}
	}
	if done+interrupted != len(calls) {
		t.Errorf("%d calls, %d reported done and %d interrupted: some have no result", len(calls), done, interrupted)
	}
	db.Close()

	all, _ := filepath.Glob(filepath.Join(data, "workspaces", "*", "*.db"))
	more, _ := filepath.Glob(filepath.Join(data, "workspaces", "*", "agents", "*", "*.db"))
	all = append(all, more...)
	for _, path := range all {
		check, err := sql.Open("sqlite", "file:"+path)
		if err != nil {
			t.Fatal(err)
		}
		var ok string
		if err := check.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
			t.Errorf("%s: integrity_check = %q, %v", path, ok, err)
		}
		check.Close()
	}
	amu.Lock()
	t.Logf("serve chaos: %d kills, %d webhooks accepted (%d answered as duplicates of a lost answer, %d refused or cut off and sent again), "+
		"%d runs lost, %d doubled; %d side effects (%d reported done, %d interrupted), %d doubled; %d databases checked; %s (restarts took %s in all)",
		kills, len(accepted), duplicates, retries, lostRuns, doubledRuns, len(marked), done, interrupted, doubled, len(all), elapsed.Round(time.Second), restarts.Round(time.Second))
	amu.Unlock()
}

func randomHex(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
