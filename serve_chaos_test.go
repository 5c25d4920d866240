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
	serveURL   = regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?token=[0-9a-f]+`)
	serveJob   = regexp.MustCompile(`job (j\d+) (\w+)`)
	markInput  = regexp.MustCompile(`"message":\s*"(j\d+)"`)
	shellInput = regexp.MustCompile(`"echo (j\d+) `)
)

// The kinds of job the chaos mixes, in turn: a connector call, a shell
// command, a shell command held for approval, and call_agent (whose
// called agent runs a shell command).
var chaosKinds = []string{"mark", "shell", "approve", "call", "mark"}

// serveProc is one `rerun serve` process and where it listens.
type serveProc struct {
	cmd   *exec.Cmd
	base  string // http://127.0.0.1:PORT
	token string
}

// TestServeChaos SIGKILLs a real `rerun serve` at random moments while
// webhooks arrive, restarting it each time. The runs they start mix every
// call that acts: a tool of a stdio MCP server, a shell command, a shell
// command held on an approval card that the test answers at random times,
// and call_agent; each side effect writes a line to a marker file. Every
// webhook answered 2xx becomes exactly one run (the sender retries the
// others with the same idempotency key, as webhook senders do); each side
// effect happens at most once, and the calls a kill interrupted are
// reported to the model as interrupted; a run paused on an open card is
// still paused after a restart; no server or command process outlives the
// app; every database passes integrity_check.
func TestServeChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes for a while")
	}
	const jobs, minKills = 150, 30
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

	// Shell commands write to the workspace's shared folder (their sandbox
	// lets them), sleeping with a copy of sleep found there by its path.
	var shared, sleeper string
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
		job, kind := m[1], m[2]
		nap := "0.2"
		if job[len(job)-1] == '3' { // one in ten calls takes long, so a kill finds it running
			nap = "3"
		}
		switch kind {
		case "mark":
			return llmtest.Tools(llmtest.ToolCall{ID: "c" + job, Name: "chaos__mark", Args: fmt.Sprintf(`{"message":%q,"seconds":%s}`, job, nap)})
		case "call":
			return llmtest.Tools(llmtest.ToolCall{ID: "c" + job, Name: "call_agent", Args: `{"handle":"clerk","message":"job ` + job + ` shell"}`})
		}
		cmd := fmt.Sprintf("echo %s >> %s; %s %s", job, filepath.Join(shared, "marker"), sleeper, nap)
		b, _ := json.Marshal(map[string]string{"command": cmd})
		return llmtest.Tools(llmtest.ToolCall{ID: "c" + job, Name: "run_command", Args: string(b)})
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

	// Hooks has a stdio MCP server whose mark tool is a side effect, the
	// shell and call_agent; Careful's commands wait for approval; Clerk is
	// the agent called. Hooks and Careful each have a webhook trigger.
	var list struct{ Current string }
	call("GET", "/api/workspaces", nil, &list)
	ws := "/api/workspaces/" + list.Current
	shared = filepath.Join(data, "workspaces", list.Current, "shared")
	sleeper = filepath.Join(shared, "chaos-sleep")
	if b, err := os.ReadFile("/bin/sleep"); err != nil || os.WriteFile(sleeper, b, 0o755) != nil {
		t.Fatalf("copy /bin/sleep into the shared folder: %v", err)
	}
	var board struct{ Boxes []struct{ ID string } }
	call("GET", ws+"/board", nil, &board)
	newAgent := func(name string, caps []string, askFirst map[string]bool) string {
		var ag struct{ ID string }
		call("POST", ws+"/agents", map[string]any{"name": name, "box_id": board.Boxes[0].ID, "capabilities": caps, "ask_first": askFirst}, &ag)
		return ag.ID
	}
	hooks := newAgent("Hooks", []string{"connectors", "shell", "agents"}, map[string]bool{"shell": false})
	careful := newAgent("Careful", []string{"shell"}, map[string]bool{"shell": true})
	newAgent("Clerk", []string{"shell"}, map[string]bool{"shell": false})
	var app struct {
		ID, Status string
		Tools      []struct {
			AgentName string `json:"agent_name"`
			State     string
		}
	}
	call("POST", ws+"/agents/"+hooks+"/apps/custom", map[string]any{"name": "Chaos", "command": exe,
		"env": map[string]string{connectortest.StdioEnv: "1", connectortest.CallLogEnv: marks, "CHAOS_SERVER_MARK": serverMark}}, &app)
	call("POST", ws+"/apps/"+app.ID+"/test", nil, &app)
	approved := false
	for _, tl := range app.Tools {
		approved = approved || tl.AgentName == "chaos__mark" && tl.State == "approved"
	}
	if !approved {
		t.Fatalf("the app is %s with tools %+v, want chaos__mark approved", app.Status, app.Tools)
	}
	hookPath := map[string]string{} // agent → its webhook's path
	for _, id := range []string{hooks, careful} {
		var trig struct{ URL string }
		call("POST", ws+"/agents/"+id+"/triggers", map[string]any{"name": "Jobs", "instruction": "Do the job.", "rate_limit": 100000}, &trig)
		hook, err := url.Parse(trig.URL)
		if err != nil {
			t.Fatal(err)
		}
		hookPath[id] = hook.Path
	}
	kindOf := func(job string) string {
		var n int
		fmt.Sscanf(job, "j%d", &n)
		return chaosKinds[n%len(chaosKinds)]
	}

	// Cards: some answered at each random moment, each item approved three
	// times in four; at the end all of them.
	type card struct {
		ID, RunID string
		Request   struct {
			Items []struct{ ID string }
		}
	}
	openCards := func() []card {
		var ps []struct {
			ID      string          `json:"id"`
			RunID   string          `json:"run_id"`
			Request json.RawMessage `json:"request"`
		}
		call("GET", ws+"/pauses?status=open", nil, &ps)
		var out []card
		for _, p := range ps {
			c := card{ID: p.ID, RunID: p.RunID}
			json.Unmarshal(p.Request, &c.Request)
			out = append(out, c)
		}
		return out
	}
	var rngMu sync.Mutex
	rng := mrand.New(mrand.NewPCG(19, uint64(time.Now().UnixNano())))
	intN := func(n int) int { rngMu.Lock(); defer rngMu.Unlock(); return rng.IntN(n) }
	answered := 0
	answerSome := func(all bool) {
		for _, c := range openCards() {
			if !all && intN(3) != 0 {
				continue
			}
			var ds []map[string]any
			for _, it := range c.Request.Items {
				ds = append(ds, map[string]any{"id": it.ID, "approved": intN(4) != 0})
			}
			call("POST", ws+"/pauses/"+c.ID+"/answer", map[string]any{"decisions": ds}, nil)
			answered++
		}
	}
	runStatus := func(id string) string {
		var r struct{ Status string }
		call("GET", ws+"/runs/"+id, nil, &r)
		return r.Status
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
			path := hookPath[hooks]
			if kindOf(job) == "approve" {
				path = hookPath[careful]
			}
			req, _ := http.NewRequest("POST", current().base+path, strings.NewReader(`{"text":"job `+job+` `+kindOf(job)+`"}`))
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

	began := time.Now()
	var restarts time.Duration
	released, kills, stillPaused := 0, 0, 0
	for released < jobs || kills < minKills {
		for n := 3 + intN(8); n > 0 && released < jobs; n-- {
			queue <- fmt.Sprintf("j%03d", released)
			released++
		}
		time.Sleep(time.Duration(300+intN(1200)) * time.Millisecond) // the random moment
		answerSome(false)
		time.Sleep(time.Duration(intN(300)) * time.Millisecond)
		pausedAt := openCards()
		// A few webhooks arrive as the app dies: some are cut off and sent
		// again with the same idempotency key.
		for n := 1 + intN(3); n > 0 && released < jobs; n-- {
			queue <- fmt.Sprintf("j%03d", released)
			released++
		}
		time.Sleep(time.Duration(intN(40)) * time.Millisecond)
		kill()
		kills++
		t0 := time.Now()
		start()
		restarts += time.Since(t0)
		// A run paused on a card still open is still paused after the restart.
		open := map[string]bool{}
		for _, c := range openCards() {
			open[c.ID] = true
		}
		for _, c := range pausedAt {
			if !open[c.ID] {
				t.Errorf("card %s of run %s was open at the kill and is gone after the restart", c.ID, c.RunID)
			} else if st := runStatus(c.RunID); st != "paused" {
				t.Errorf("run %s was paused on an open card and is %s after a restart", c.RunID, st)
			} else {
				stillPaused++
			}
		}
	}
	close(queue)

	acceptedCount := func() int { amu.Lock(); defer amu.Unlock(); return len(accepted) }
	waittest.Progress(t, "every webhook answered 2xx", waittest.Patience, func() (int, bool) {
		n := acceptedCount()
		return n, n == jobs
	})
	if kills < minKills || released < jobs {
		t.Errorf("only %d kills across %d webhooks", kills, released)
	}
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
	// When a run never ends, say which and where it stands.
	defer func() {
		if !t.Failed() {
			return
		}
		rows, err := db.Query(`SELECT r.id, r.agent_id, r.parent_run_id, r.status, r.error, r.steps,
			coalesce((SELECT group_concat(kind || ':' || substr(data, 1, 160), ' | ') FROM (SELECT kind, data FROM steps WHERE run_id = r.id ORDER BY seq DESC LIMIT 3)), '')
			FROM runs r WHERE r.status NOT IN ('done', 'failed', 'cancelled') LIMIT 20`)
		if err != nil {
			t.Logf("runs not ended: %v", err)
			return
		}
		defer rows.Close()
		for rows.Next() {
			var id, agentID, parent, status, errText, last string
			var steps int
			rows.Scan(&id, &agentID, &parent, &status, &errText, &steps, &last)
			t.Logf("not ended: run %s (agent %s, parent %q) %s after %d steps, error %q; last steps: %s", id, agentID, parent, status, steps, errText, last)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "serve.log")); err == nil {
			lines := strings.Split(string(b), "\n")
			t.Logf("the last lines of serve.log:\n%s", strings.Join(lines[max(0, len(lines)-40):], "\n"))
		}
	}()
	waittest.Progress(t, "every run to end", waittest.Patience, func() (int, bool) {
		answerSome(true)
		n := count(`SELECT count(*) FROM runs WHERE status IN ('done', 'failed', 'cancelled')`)
		all := count(`SELECT count(*) FROM runs`)
		if n < all {
			time.Sleep(100 * time.Millisecond)
		}
		return n, n == all
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
	rows, err := db.Query(`SELECT id, input, status FROM runs WHERE agent_id IN (?, ?)`, hooks, careful)
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
	// rest were reported interrupted (or declined, for a card).
	marked := map[string]int{}
	for _, l := range connectortest.CallLog(t, marks) {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "mark" { // mark <job> <pid>
			marked[f[1]]++
		}
	}
	shelled := map[string]int{}
	if b, err := os.ReadFile(filepath.Join(shared, "marker")); err == nil {
		for _, job := range strings.Fields(string(b)) {
			shelled[job]++
		}
	}
	doubled := 0
	for _, effects := range []map[string]int{marked, shelled} {
		for job, n := range effects {
			if n > 1 {
				doubled++
				t.Errorf("side effect of %s happened %d times", job, n)
			}
		}
	}
	done, interrupted, declined := 0, 0, 0
	calls := map[string]int{}     // job → tool calls that act, recorded
	clerkRuns := map[string]int{} // job → runs of the called agent
	steps, err := db.Query(`SELECT r.id, r.input, st.kind, st.data FROM steps st JOIN runs r ON r.id = st.run_id
		WHERE st.kind IN ('tool_call', 'tool_result') ORDER BY st.run_id, st.seq`)
	if err != nil {
		t.Fatal(err)
	}
	type pending struct{ job, tool string }
	callOf := map[string]pending{}
	answeredCall := map[string]bool{}
	for steps.Next() {
		var runID, input, kind, raw string
		steps.Scan(&runID, &input, &kind, &raw)
		switch kind {
		case run.StepToolCall:
			var c run.ToolCall
			json.Unmarshal([]byte(raw), &c)
			var job string
			if m := markInput.FindStringSubmatch(string(c.Input)); m != nil && c.Name == "chaos__mark" {
				job = m[1]
			} else if m := shellInput.FindStringSubmatch(string(c.Input)); m != nil && c.Name == "run_command" {
				job = m[1]
			} else if m := serveJob.FindStringSubmatch(input); m != nil && c.Name == "call_agent" {
				job = m[1]
			}
			// A held call is recorded when asked for and again when, approved, it
			// starts: one call.
			if _, seen := callOf[runID+" "+c.ID]; job != "" && !seen {
				callOf[runID+" "+c.ID] = pending{job, c.Name}
				calls[job+" "+c.Name]++
			}
		case run.StepToolResult:
			var res run.ToolResultData
			json.Unmarshal([]byte(raw), &res)
			p, ok := callOf[runID+" "+res.ID]
			answeredCall[runID+" "+res.ID] = true
			switch {
			case !ok:
			case res.Decision == "declined":
				declined++
			case strings.Contains(res.Output, "interrupted"):
				interrupted++
			case p.tool == "chaos__mark" && res.Output == "marked "+p.job:
				done++
				if marked[p.job] != 1 {
					t.Errorf("job %s: the model heard its app call ran, but its side effect is missing", p.job)
				}
			case p.tool == "run_command" && !res.IsError:
				done++
				if shelled[p.job] != 1 {
					t.Errorf("job %s: the model heard its command ran, but its side effect is missing", p.job)
				}
			case p.tool == "call_agent":
				done++
			default:
				t.Errorf("job %s: %s answered %q", p.job, p.tool, res.Output)
			}
		}
	}
	steps.Close()
	clerks, err := db.Query(`SELECT r.input FROM runs r JOIN agents a ON a.id = r.agent_id WHERE a.handle = 'clerk'`)
	if err != nil {
		t.Fatal(err)
	}
	for clerks.Next() {
		var input string
		clerks.Scan(&input)
		if m := serveJob.FindStringSubmatch(input); m != nil {
			clerkRuns[m[1]]++
		}
	}
	clerks.Close()
	for job, n := range clerkRuns {
		if n != 1 {
			t.Errorf("job %s: the called agent ran %d times, want once", job, n)
		}
	}
	for key, n := range calls {
		if n != 1 {
			t.Errorf("%s: %d tool calls recorded, want one (never run again)", key, n)
		}
	}
	for key, p := range callOf {
		if !answeredCall[key] {
			t.Errorf("%s of job %s (run and call %s) has no result", p.tool, p.job, key)
		}
	}
	// No command outlives the app.
	left := 0
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), sleeper) {
			left++
			t.Errorf("left over: %s %q", p, b)
		}
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
		"%d runs lost, %d doubled; %d cards answered, %d runs still paused across a restart; %d side effects (%d app calls, %d commands; %d reported done, %d interrupted, %d declined), %d doubled; "+
		"%d processes left over; %d databases checked; %s (restarts took %s in all)",
		kills, len(accepted), duplicates, retries, lostRuns, doubledRuns, answered, stillPaused, len(marked)+len(shelled), len(marked), len(shelled),
		done, interrupted, declined, doubled, left, len(all), elapsed.Round(time.Second), restarts.Round(time.Second))
	amu.Unlock()
}

func randomHex(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
