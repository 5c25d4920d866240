package mcpapi

import (
	"context"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// Waits bounds the tool calls that wait (send_message with wait_seconds)
// over HTTP. Claude Code and Gemini CLI give up on a call when no response
// headers arrive within 60 s, and wait as long as progress keeps coming on
// an event stream.
type Waits struct {
	// Progress is how often a call whose client sent a progress token
	// reports progress (default 10 s); the first report goes at once, which
	// starts the event stream and so sends the response headers.
	Progress time.Duration
	// Bare caps the wait of a call without a progress token (default
	// 50 s), under the clients' 60 s; its answer says to poll get_run.
	Bare time.Duration
}

func (l Waits) withDefaults() Waits {
	if l.Progress <= 0 {
		l.Progress = 10 * time.Second
	}
	if l.Bare <= 0 {
		l.Bare = 50 * time.Second
	}
	return l
}

type waitsKey struct{}

type progressKey struct{}

// waitRun waits up to d for run id to end or pause and returns it as it is
// then, with a note when the wait was cut short to fit the transport. Over
// HTTP with a progress token it reports progress all along; without one it
// waits at most Bare. In process (no Waits in ctx) it waits all of d.
func waitRun(ctx context.Context, w *workspace.Workspace, id string, d time.Duration) (run.Run, string) {
	lim, overHTTP := ctx.Value(waitsKey{}).(Waits)
	token := ctx.Value(progressKey{})
	srv := server.ServerFromContext(ctx)
	streaming := overHTTP && token != nil && srv != nil
	note := ""
	if overHTTP && !streaming && d > lim.Bare {
		d = lim.Bare
		note = fmt.Sprintf("waited %d s, the most a call without a progress token can wait over HTTP; the run goes on: poll get_run with run_id %s until its status is done, failed, cancelled or paused", int(d/time.Second), id)
	}
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	ended := make(chan struct{})
	if streaming {
		go reportProgress(wctx, srv, token, id, d, lim.Progress, ended)
	}
	got, err := w.Runs.Wait(wctx, id)
	close(ended)
	if err != nil && got.ID == "" {
		if got, err = w.Runs.Get(context.WithoutCancel(ctx), id); err != nil {
			return run.Run{ID: id}, note
		}
	}
	if !got.Finished() && got.Status != run.Paused && note == "" {
		note = fmt.Sprintf("the run is still %s after the wait; poll get_run with run_id %s", got.Status, id)
	}
	return got, note
}

// reportProgress sends notifications/progress at once and then every
// interval until ended is closed or ctx ends. Progress is in seconds waited,
// of total.
func reportProgress(ctx context.Context, srv *server.MCPServer, token any, id string, total, interval time.Duration, ended <-chan struct{}) {
	start := time.Now()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		waited := time.Since(start)
		srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
			"progressToken": token,
			"progress":      waited.Seconds(),
			"total":         total.Seconds(),
			"message":       fmt.Sprintf("run %s: waited %d of %d s", id, int(waited/time.Second), int(total/time.Second)),
		})
		select {
		case <-tick.C:
		case <-ended:
			return
		case <-ctx.Done():
			return
		}
	}
}
