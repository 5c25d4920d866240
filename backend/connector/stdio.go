package connector

// The stdio transport: the MCP SDK's line protocol over the pipes of a
// process this package starts and ends itself. Owning the pipes lets a call
// tell a request that never reached the server (the process had died: safe
// to send again to a new one) from one the server read and died on (not
// safe: the tool may have acted, so the caller is told it was interrupted).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// stopGrace is how long a stdio server has to exit after SIGTERM and the
// end of its stdin before its whole process group is killed.
const stopGrace = 5 * time.Second

// errInterrupted: the server read the request and stopped before it
// answered.
var errInterrupted = errors.New("the server stopped before it answered")

// notSentError is a request that never reached the server.
type notSentError struct{ err error }

func (e *notSentError) Error() string { return fmt.Sprintf("send request: %v", e.err) }
func (e *notSentError) Unwrap() error { return e.err }

// stdioTransport is a transport.Interface over a server process started by
// Start and ended, with its whole process group, by Close.
type stdioTransport struct {
	cmd    *exec.Cmd // built, not started; its Stderr is the tail
	stderr *tail
	tmp    string // the server's private temp folder, removed once it ended ("": none)

	mu     sync.Mutex
	stdio  *transport.Stdio // set once the process started
	in     *sentLog
	out    *endReader
	closed bool
}

func newStdioTransport(cmd *exec.Cmd, stderr *tail) *stdioTransport {
	setProcessGroup(cmd)
	return &stdioTransport{cmd: cmd, stderr: stderr}
}

// Start starts the process and reads its stdout until it ends.
func (t *stdioTransport) Start(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stdio != nil {
		return nil
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("open the server's stdin: %w", err)
	}
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("open the server's stdout: %w", err)
	}
	if err := t.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", t.cmd.Path, err)
	}
	t.in = &sentLog{w: stdin, sent: map[string]bool{}}
	t.out = &endReader{r: stdout}
	t.stdio = transport.NewIO(t.out, t.in, nil)
	return t.stdio.Start(ctx)
}

func (t *stdioTransport) inner() *transport.Stdio {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stdio
}

// SendRequest sends the request and waits for its answer. A request that
// was never written in full comes back as a notSentError; one the server
// stopped on after it was written, as errInterrupted.
func (t *stdioTransport) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	s := t.inner()
	if s == nil {
		return nil, &notSentError{transport.ErrTransportClosed}
	}
	resp, err := s.SendRequest(ctx, req)
	sent := t.in.take(req.ID.String())
	switch {
	case err == nil:
		return resp, nil
	case !sent && ctx.Err() == nil:
		return nil, &notSentError{err}
	case sent && errors.Is(err, transport.ErrTransportClosed):
		return nil, errInterrupted
	}
	return nil, err
}

func (t *stdioTransport) SendNotification(ctx context.Context, n mcp.JSONRPCNotification) error {
	if s := t.inner(); s != nil {
		return s.SendNotification(ctx, n)
	}
	return transport.ErrTransportClosed
}

func (t *stdioTransport) SetNotificationHandler(h func(mcp.JSONRPCNotification)) {
	if s := t.inner(); s != nil {
		s.SetNotificationHandler(h)
	}
}

// SetRequestHandler answers the server's own requests (sampling, roots).
func (t *stdioTransport) SetRequestHandler(h transport.RequestHandler) {
	if s := t.inner(); s != nil {
		s.SetRequestHandler(h)
	}
}

func (t *stdioTransport) GetSessionId() string { return "" }

// ended reports that the server's stdout ended: it died or hung up, and
// the next call needs a new process.
func (t *stdioTransport) ended() bool {
	t.mu.Lock()
	out := t.out
	t.mu.Unlock()
	return out != nil && out.ended.Load()
}

// Close ends the session and the server's whole process group: a polite
// SIGTERM and the end of its stdin first, then, once the leader exited or
// stopGrace passed, SIGKILL for anything left (npx's children included).
func (t *stdioTransport) Close() error {
	t.mu.Lock()
	s := t.stdio
	if s == nil || t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.mu.Unlock()
	terminateGroup(t.cmd)
	err := s.Close()
	exited := make(chan struct{})
	go func() {
		// exec copies stderr itself, so once Wait returns all of it is in
		// the tail; a grandchild keeping the pipe open delays that by
		// WaitDelay at most.
		t.cmd.Wait()
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(stopGrace):
	}
	// Safe after the leader exited: a process group id is not reused
	// while any member lives.
	killGroup(t.cmd)
	<-exited
	if t.tmp != "" {
		os.RemoveAll(t.tmp)
	}
	return err
}

// sentLog is the server's stdin. It remembers the ids of the requests
// written in full, so SendRequest knows whether the server could have read
// one; the SDK writes each message with a single Write.
type sentLog struct {
	w io.WriteCloser

	mu   sync.Mutex
	sent map[string]bool
}

func (l *sentLog) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	if err != nil {
		return n, err
	}
	var msg struct {
		ID     *mcp.RequestId `json:"id"`
		Method string         `json:"method"`
	}
	// Answers to the server's own requests carry an id but no method.
	if json.Unmarshal(p, &msg) == nil && msg.ID != nil && msg.Method != "" {
		l.mu.Lock()
		l.sent[msg.ID.String()] = true
		l.mu.Unlock()
	}
	return n, nil
}

func (l *sentLog) Close() error { return l.w.Close() }

// take reports whether the request id was written, and forgets it.
func (l *sentLog) take(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	sent := l.sent[id]
	delete(l.sent, id)
	return sent
}

// endReader is the server's stdout; it notes when it ended.
type endReader struct {
	r     io.Reader
	ended atomic.Bool
}

func (r *endReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil {
		r.ended.Store(true)
	}
	return n, err
}
