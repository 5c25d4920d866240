//go:build linux

package run_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// TestChaosChild is the app TestChaos kills: it serves runs until it dies.
func TestChaosChild(t *testing.T) {
	dir := os.Getenv("RERUN_CHAOS_DIR")
	if dir == "" {
		t.Skip("run by TestChaos")
	}
	svc, _, _, _ := servicesAt(t, dir, os.Getenv("RERUN_CHAOS_OPENAI"))
	svc.Serve(context.Background()) // until SIGKILL
}

var chaosJob = regexp.MustCompile(`job (\w+) (\w+)`)

// TestChaos SIGKILLs a serving process at random moments while runs with
// shell side effects, approval cards answered at random times and
// call_agent go on, restarting it each time. Every side effect appends its
// job's id to a marker file: none may appear twice, none reported done may be
// missing, no command may outlive the end, a paused run stays paused until
// its card is answered, and the database stays sound.
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes for a while")
	}
	const jobs, minKills = 150, 30
	dir := t.TempDir()
	// In the shared folder: sandboxed commands reach only it and their own.
	shared := filepath.Join(dir, "shared")
	if err := os.MkdirAll(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(shared, "marker")
	// A sleep of its own, so that a process left over is found by its path.
	sleeper := filepath.Join(shared, "chaos-sleep")
	if b, err := os.ReadFile("/bin/sleep"); err != nil || os.WriteFile(sleeper, b, 0o755) != nil {
		t.Skip("no /bin/sleep to copy")
	}

	fake := llmtest.New(t)
	fake.SetFallback(func(req llmtest.Request) llmtest.Reply {
		last := req.Messages[len(req.Messages)-1]
		if len(last.ToolResults) > 0 {
			return llmtest.Text("done")
		}
		m := chaosJob.FindStringSubmatch(last.Text)
		if m == nil {
			return llmtest.Text("no job")
		}
		id, kind := m[1], m[2]
		if kind == "call" {
			return llmtest.Tools(llmtest.ToolCall{ID: "c" + id, Name: "call_agent", Args: `{"handle":"clerk","message":"job ` + id + ` shell"}`})
		}
		nap := "0.3"
		if id[len(id)-1] == '7' { // one in ten runs long, so a kill finds it running
			nap = "8"
		}
		return llmtest.Tools(llmtest.ToolCall{ID: "c" + id, Name: "run_command",
			Args: fmt.Sprintf(`{"command":"echo %s >> %s; %s %s"}`, id, marker, sleeper, nap)})
	})
	svc, agents, boxes, closeDB := services(t, dir, fake)
	defer closeDB()
	ctx := context.Background()
	b, _ := boxes.Create(ctx, "Main")
	mk := func(name string, askFirst bool) agent.Agent {
		a, err := agents.Create(ctx, agent.NewAgent{Name: name, BoxID: b.ID, Capabilities: []string{"shell", "agents"},
			AskFirst: map[string]bool{"shell": askFirst}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	worker, careful := mk("Worker", false), mk("Careful", true)
	mk("Clerk", false)

	var child *exec.Cmd
	startChild := func() {
		child = exec.Command(os.Args[0], "-test.run=^TestChaosChild$")
		child.Env = append(os.Environ(), "RERUN_CHAOS_DIR="+dir, "RERUN_CHAOS_OPENAI="+fake.OpenAIURL())
		log, _ := os.OpenFile(filepath.Join(dir, "child.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		child.Stdout, child.Stderr = log, log
		if err := child.Start(); err != nil {
			t.Fatal(err)
		}
	}
	kill := func() {
		child.Process.Signal(syscall.SIGKILL)
		child.Wait()
	}
	startChild()
	defer func() { kill() }()

	rng := rand.New(rand.NewPCG(19, uint64(time.Now().UnixNano())))
	var ids []string
	started := 0
	startJob := func() {
		kinds := []string{"shell", "shell", "approve", "call"}
		kind := kinds[rng.IntN(len(kinds))]
		a := worker
		if kind == "approve" {
			a = careful
		}
		id := fmt.Sprintf("j%03d", started)
		started++
		sess, err := svc.NewSession(ctx, a.ID, run.SourceAPI, "")
		if err != nil {
			t.Fatal(err)
		}
		r, err := svc.Start(ctx, a.ID, sess.ID, run.SourceAPI, "job "+id+" "+kind, run.StartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	answerSome := func(all bool) {
		ps, _ := svc.Pauses(ctx, run.PauseFilter{Status: pause.Open})
		for _, p := range ps {
			if !all && rng.IntN(3) != 0 {
				continue
			}
			var req pause.ApprovalRequest
			json.Unmarshal(p.Request, &req)
			var ds []string
			for _, it := range req.Items {
				ds = append(ds, fmt.Sprintf(`{"id":%q,"approved":%v}`, it.ID, rng.IntN(4) != 0))
			}
			svc.Answer(ctx, p.ID, json.RawMessage(`{"decisions":[`+strings.Join(ds, ",")+`]}`))
		}
	}
	// pausedAt are the runs paused with an open card at the last kill.
	pausedAt := map[string]string{} // run → its card
	checkPaused := func() {
		for runID, pauseID := range pausedAt {
			p, err := svc.GetPause(ctx, pauseID)
			if err != nil || p.Status != pause.Open {
				continue // answered since
			}
			if r, _ := svc.Get(ctx, runID); r.Status != run.Paused {
				t.Errorf("run %s was paused with an open card and is %s after a restart", runID, r.Status)
			}
		}
	}
	began := time.Now()
	kills := 0
	for started < jobs || kills < minKills {
		for i := 0; i < 1+rng.IntN(4) && started < jobs; i++ {
			startJob()
		}
		time.Sleep(time.Duration(200+rng.IntN(1200)) * time.Millisecond) // the random moment
		answerSome(false)
		time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
		checkPaused()
		kill()
		kills++
		clear(pausedAt)
		ps, _ := svc.Pauses(ctx, run.PauseFilter{Status: pause.Open})
		for _, p := range ps {
			pausedAt[p.RunID] = p.ID
		}
		startChild()
	}

	// Let the last process finish everything, answering each card.
	waittest.Progress(t, "every run to end", 2*waittest.Patience, func() (int, bool) {
		answerSome(true)
		n := 0
		for _, id := range ids {
			if r, _ := svc.Get(ctx, id); r.Status == run.Done || r.Status == run.Failed || r.Status == run.Cancelled {
				n++
			}
		}
		if n < len(ids) {
			time.Sleep(100 * time.Millisecond)
		}
		return n, n == len(ids)
	})
	kill()
	elapsed := time.Since(began)

	// Side effects: each at most once, and each the model heard ran is there.
	b2, _ := os.ReadFile(marker)
	count := map[string]int{}
	for _, l := range strings.Fields(string(b2)) {
		count[l]++
	}
	doubled, lost, done, interrupted := 0, 0, 0, 0
	for id, n := range count {
		if n > 1 {
			doubled++
			t.Errorf("job %s ran %d times", id, n)
		}
	}
	all, _ := svc.List(ctx, run.ListOptions{Limit: 1000})
	for _, r := range all {
		steps, _ := svc.Steps(ctx, r.ID)
		calls := map[string]string{}
		for _, st := range steps {
			switch st.Kind {
			case run.StepToolCall:
				var c run.ToolCall
				json.Unmarshal(st.Data, &c)
				if m := regexp.MustCompile(`echo (j\d+) `).FindStringSubmatch(string(c.Input)); m != nil {
					calls[c.ID] = m[1]
				}
			case run.StepToolResult:
				var res run.ToolResultData
				json.Unmarshal(st.Data, &res)
				id, ok := calls[res.ID]
				switch {
				case !ok || res.Decision == "declined":
				case strings.Contains(res.Output, "interrupted"):
					interrupted++
				case !res.IsError:
					done++
					if count[id] != 1 {
						lost++
						t.Errorf("job %s: the model heard it ran, but its side effect is missing", id)
					}
				}
			}
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
	// Every database is sound.
	dbs, _ := filepath.Glob(filepath.Join(dir, "*.db"))
	more, _ := filepath.Glob(filepath.Join(dir, "agents", "*", "*.db"))
	for _, path := range append(dbs, more...) {
		db, err := sql.Open("sqlite", "file:"+path)
		if err != nil {
			t.Fatal(err)
		}
		var ok string
		if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
			t.Errorf("%s: integrity_check = %q, %v", path, ok, err)
		}
		db.Close()
	}
	t.Logf("chaos: %d kills, %d runs (%d in all with called agents), %d side effects (%d reported done, %d interrupted), %d lost, %d doubled, %d left over, %d databases checked, %s",
		kills, len(ids), len(all), len(count), done, interrupted, lost, doubled, left, len(dbs)+len(more), elapsed.Round(time.Second))
	if kills < minKills || len(ids) < jobs {
		t.Errorf("only %d kills across %d runs", kills, len(ids))
	}
}
