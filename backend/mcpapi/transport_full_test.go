package mcpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// The long-wait promise at full scale, with the server's default timings:
// a client that drops a connection when no response headers arrive within
// 60 s (as Claude Code and Gemini CLI do) still gets the answer of a run
// that takes 120 s, and a bare call is answered before the client gives
// up. The two run side by side with the rest of the package; they cost
// wall time, not CPU.
func TestLongWaitAtFullScale(t *testing.T) {
	t.Parallel()
	const patience = 60 * time.Second

	t.Run("progress token, 120 s run", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		c, notes := e.impatientClient(patience)
		mustCall(t, c, "create_agent", map[string]any{"name": "Slow"}, nil)
		release := e.holdModel("Two minutes later.")
		type answer struct {
			res *mcp.CallToolResult
			err error
		}
		got := make(chan answer, 1)
		go func() {
			res, err := c.CallTool(context.Background(), sendMessage(180, "full"))
			got <- answer{res, err}
		}()
		var reports int
		for last := 0.0; last < 120; {
			select {
			case a := <-got:
				t.Fatalf("send_message ended after %d progress reports (%.0f s): %v %+v", reports, last, a.err, a.res)
			default:
			}
			n := waittest.Recv(t, "a progress report", notes)
			if n.Method != "notifications/progress" {
				continue
			}
			p, _ := n.Params.AdditionalFields["progress"].(float64)
			if p < last {
				t.Fatalf("progress went back from %.0f to %.0f", last, p)
			}
			last = p
			reports++
		}
		release()
		a := waittest.Recv(t, "the send_message result", got)
		if a.err != nil {
			t.Fatalf("send_message after a 120 s wait: %v", a.err)
		}
		if r := resultRun(t, a.res); r.Status != "done" || r.Output != "Two minutes later." {
			t.Errorf("run = %s %q, want done with the answer", r.Status, r.Output)
		}
		if reports < 120/15 {
			t.Errorf("%d progress reports over 120 s, want one at the start and one every ≤ 15 s", reports)
		}
	})

	t.Run("no token, answered before the client gives up", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		c, _ := e.impatientClient(patience)
		mustCall(t, c, "create_agent", map[string]any{"name": "Slow"}, nil)
		release := e.holdModel("Later.")
		defer release()
		res, err := c.CallTool(context.Background(), sendMessage(180, nil))
		if err != nil {
			t.Fatalf("send_message without a progress token: %v", err)
		}
		if r := resultRun(t, res); r.Status != "running" && r.Status != "queued" {
			t.Errorf("run = %s, want still going with a note to poll get_run", r.Status)
		}
	})
}
