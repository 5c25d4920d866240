package run_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/run"
)

// instant is a model that answers at once, in process: it calls list_files
// until it has done so `calls` times in the conversation, then says "done".
// It measures the loop itself, without HTTP or an SDK.
type instant struct{ calls int }

func (instant) Name() string { return "instant" }
func (m instant) Chat(ctx context.Context, req llm.Request, onDelta func(llm.Delta)) (llm.Response, error) {
	results := 0
	for _, msg := range req.Messages {
		for _, p := range msg.Parts {
			if p.Type == llm.PartToolResult {
				results++
			}
		}
	}
	if results < m.calls {
		return llm.Response{StopReason: llm.StopToolUse, Usage: llm.Usage{InputTokens: 10, OutputTokens: 5},
			Parts: []llm.Part{{Type: llm.PartToolUse, ToolCallID: fmt.Sprint("c", results), ToolName: "list_files", Input: []byte(`{}`)}}}, nil
	}
	if onDelta != nil {
		onDelta(llm.Delta{Text: "done"})
	}
	return llm.Response{StopReason: llm.StopEnd, Parts: []llm.Part{{Type: llm.PartText, Text: "done"}}, Usage: llm.Usage{InputTokens: 10, OutputTokens: 1}}, nil
}

type instantModels struct{ m instant }

func (i instantModels) Pick(string, string) (llm.Provider, string, string, error) {
	return i.m, "instant", "instant-1", nil
}
func (instantModels) Cost(string, llm.Usage) (float64, bool) { return 0, false }

// BenchmarkStepOverhead is the loop's own cost per step: a run of 20 tool
// calls (≈ 61 steps) against an instant in-process model. Reports µs and
// SQLite commits per step.
func BenchmarkStepOverhead(b *testing.B) {
	f := base(b)
	svc := f.serve(instantModels{instant{calls: 20}}, run.Config{MaxSteps: 10000})
	ctx := context.Background()
	a := f.agent("Bench", "files")
	sess, _ := svc.NewSession(ctx, a.ID, run.SourceAPI, "")
	b.ResetTimer()
	var steps int
	commits0 := f.db.Commits()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		r, err := svc.Start(ctx, a.ID, sess.ID, run.SourceAPI, "go", run.StartOptions{})
		if err != nil {
			b.Fatal(err)
		}
		r, err = svc.Wait(ctx, r.ID)
		if err != nil || r.Status != run.Done {
			b.Fatalf("run: %s %v %s", r.Status, err, r.Error)
		}
		steps += r.Steps
		sess, _ = svc.NewSession(ctx, a.ID, run.SourceAPI, "") // keep history short
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(elapsed.Microseconds())/float64(steps), "µs/step")
	b.ReportMetric(float64(f.db.Commits()-commits0)/float64(steps), "commits/step")
}

// BenchmarkConcurrentRuns starts 100 runs in 100 sessions at once (each two
// tool calls) and waits for all: none may fail (no SQLITE_BUSY).
func BenchmarkConcurrentRuns(b *testing.B) {
	f := base(b)
	svc := f.serve(instantModels{instant{calls: 2}}, run.Config{Workers: 16})
	ctx := context.Background()
	var agents []string
	for i := 0; i < 10; i++ {
		agents = append(agents, f.agent(fmt.Sprint("Agent ", i), "files").ID)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var ids []string
		for j := 0; j < 100; j++ {
			a := agents[j%len(agents)]
			sess, _ := svc.NewSession(ctx, a, run.SourceAPI, "")
			r, err := svc.Start(ctx, a, sess.ID, run.SourceAPI, "go", run.StartOptions{})
			if err != nil {
				b.Fatal(err)
			}
			ids = append(ids, r.ID)
		}
		for _, id := range ids {
			r, err := svc.Wait(ctx, id)
			if err != nil || r.Status != run.Done {
				b.Fatalf("run %s: %s %v %s", id, r.Status, err, r.Error)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/100runs")
}

// BenchmarkTimeToFirstToken is what the app adds before the first streamed
// token reaches the UI's event stream: from Start to the first delta, with the
// fake server answering its first chunk at once.
func BenchmarkTimeToFirstToken(b *testing.B) {
	f := setup(b, "openai", run.Config{})
	var arrived atomic.Int64
	f.fake.SetFallback(func(llmtest.Request) llmtest.Reply {
		arrived.Store(time.Now().UnixNano())
		return llmtest.Reply{Chunks: []string{"first", " second"}}
	})
	a := f.agent("Fast")
	events, stop := f.bus.Subscribe()
	defer stop()
	var toServer, toToken time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		began := time.Now()
		r := f.start(a, "hi")
		for c := range events {
			if c.Kind == event.KindDelta && c.ID == r.ID {
				break
			}
		}
		got := time.Now()
		toServer += time.Unix(0, arrived.Load()).Sub(began)
		toToken += got.Sub(began)
		f.wait(r.ID)
	}
	b.ReportMetric(float64(toServer.Microseconds())/float64(b.N), "µs-to-request")
	b.ReportMetric(float64(toToken.Microseconds())/float64(b.N), "µs-to-first-token")
}
