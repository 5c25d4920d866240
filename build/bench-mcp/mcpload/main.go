// Command mcpload measures `tools/call` on MCP servers over Streamable HTTP
// with concurrent callers, each in its own initialized session, the servers
// taking turns: round 1 on every target, then round 2, … It prints each
// round and the medians, and the ratio of the first target to the second.
//
//	go run ./build/bench-mcp/mcpload -c 16 -d 5s -rounds 3 \
//	  -target 'rerun list_agents|http://127.0.0.1:7777/api/mcp/account|Bearer rrk_…|{"name":"list_agents","arguments":{}}' \
//	  -target 'server-everything echo|http://127.0.0.1:3001/mcp||{"name":"echo","arguments":{"message":"hello"}}'
//
// Every answer is checked: an HTTP status other than 200, a JSON-RPC error or
// a tool error (isError) is a failure, counted and not timed. Written in Go
// so that one process keeps 16 callers busy on a small machine without
// being the bottleneck (a Node client capped both servers at the same rate).
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type target struct {
	name, url, auth string
	params          string // the tools/call params, JSON
}

type result struct {
	calls, failures int
	perSecond       float64
	p50, p99        time.Duration
	firstFailure    string
}

func main() {
	callers := flag.Int("c", 16, "concurrent callers, each with its own session")
	dur := flag.Duration("d", 5*time.Second, "how long each round calls each target")
	warm := flag.Duration("warmup", time.Second, "calls made and not counted before each round")
	rounds := flag.Int("rounds", 3, "rounds; the targets alternate")
	var targets []target
	flag.Func("target", "NAME|URL|AUTHORIZATION|PARAMS (repeat; the first is compared to the second)", func(s string) error {
		f := strings.SplitN(s, "|", 4)
		if len(f) != 4 {
			return errors.New("want NAME|URL|AUTHORIZATION|PARAMS")
		}
		targets = append(targets, target{f[0], f[1], f[2], f[3]})
		return nil
	})
	flag.Parse()
	if len(targets) == 0 {
		flag.Usage()
		os.Exit(2)
	}
	all := make([][]result, len(targets))
	for r := 1; r <= *rounds; r++ {
		for i, t := range targets {
			res, err := run(t, *callers, *warm, *dur)
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", t.name, err)
				os.Exit(1)
			}
			fmt.Printf("round %d, %s: %.0f calls/s, p50 %s, p99 %s, %d failures\n", r, t.name, res.perSecond, ms(res.p50), ms(res.p99), res.failures)
			if res.firstFailure != "" {
				fmt.Printf("  first failure: %.300s\n", res.firstFailure)
			}
			all[i] = append(all[i], res)
		}
	}
	med := make([]result, len(targets))
	for i, t := range targets {
		med[i] = median(all[i])
		fmt.Printf("MCP tools/call, %d callers, %s: %.0f calls/s, p50 %s, p99 %s, %d failures of %d calls (median of %d rounds)\n",
			*callers, t.name, med[i].perSecond, ms(med[i].p50), ms(med[i].p99), med[i].failures, med[i].calls, *rounds)
	}
	if len(med) > 1 && med[1].perSecond > 0 {
		fmt.Printf("MCP ratio %s / %s: %.2f× the calls/s, p99 %.2f×\n", targets[0].name, targets[1].name,
			med[0].perSecond/med[1].perSecond, float64(med[0].p99)/float64(med[1].p99))
	}
	for _, m := range med {
		if m.failures > 0 {
			os.Exit(1)
		}
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// median takes each figure's median over the rounds on its own; failures
// are summed, so one failed call anywhere shows.
func median(rs []result) result {
	pick := func(f func(result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	var m result
	for _, r := range rs {
		m.calls += r.calls
		m.failures += r.failures
	}
	m.perSecond = pick(func(r result) float64 { return r.perSecond })
	m.p50 = time.Duration(pick(func(r result) float64 { return float64(r.p50) }))
	m.p99 = time.Duration(pick(func(r result) float64 { return float64(r.p99) }))
	return m
}

// run opens a session per caller, warms up, then calls for d.
func run(t target, callers int, warm, d time.Duration) (result, error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: callers, DisableCompression: true}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	sessions := make([]*session, callers)
	for i := range sessions {
		s, err := open(client, t)
		if err != nil {
			return result{}, fmt.Errorf("open session: %w", err)
		}
		sessions[i] = s
		defer s.close()
	}
	var counting atomic.Bool
	var mu sync.Mutex
	var res result
	var lat []time.Duration
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			failures := 0
			first := ""
			for ctx.Err() == nil {
				t0 := time.Now()
				err := s.call()
				took := time.Since(t0)
				if !counting.Load() || ctx.Err() != nil {
					continue
				}
				if err != nil {
					failures++
					if first == "" {
						first = err.Error()
					}
					continue
				}
				mine = append(mine, took)
			}
			mu.Lock()
			lat = append(lat, mine...)
			res.failures += failures
			if res.firstFailure == "" {
				res.firstFailure = first
			}
			mu.Unlock()
		}()
	}
	time.Sleep(warm)
	counting.Store(true)
	t0 := time.Now()
	time.Sleep(d)
	stop()
	elapsed := time.Since(t0)
	wg.Wait()
	if len(lat) == 0 {
		return res, fmt.Errorf("no successful call (%d failures; first: %.300s)", res.failures, res.firstFailure)
	}
	slices.Sort(lat)
	res.calls = len(lat) + res.failures
	res.perSecond = float64(len(lat)) / elapsed.Seconds()
	res.p50 = lat[len(lat)/2]
	res.p99 = lat[len(lat)*99/100]
	return res, nil
}

type session struct {
	client *http.Client
	t      target
	id     string // Mcp-Session-Id, "" when the server keeps none
	n      int
	buf    bytes.Buffer
}

func open(client *http.Client, t target) (*session, error) {
	s := &session{client: client, t: t}
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcpload","version":"1"}}}`
	res, body, err := s.post(init)
	if err != nil {
		return nil, err
	}
	if err := check(res, body, 0); err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	s.id = res.Header.Get("Mcp-Session-Id")
	res, body, err = s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusAccepted && res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("notifications/initialized: %s %.200s", res.Status, body)
	}
	return s, nil
}

func (s *session) close() {
	if s.id == "" {
		return
	}
	req, _ := http.NewRequest(http.MethodDelete, s.t.url, nil)
	s.headers(req)
	if res, err := s.client.Do(req); err == nil {
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
}

func (s *session) call() error {
	s.n++
	res, body, err := s.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, s.n, s.t.params))
	if err != nil {
		return err
	}
	return check(res, body, s.n)
}

func (s *session) headers(req *http.Request) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if s.t.auth != "" {
		req.Header.Set("Authorization", s.t.auth)
	}
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
	}
}

// post sends one JSON-RPC message and reads the whole answer.
func (s *session) post(msg string) (*http.Response, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, s.t.url, strings.NewReader(msg))
	if err != nil {
		return nil, nil, err
	}
	s.headers(req)
	res, err := s.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	s.buf.Reset()
	_, err = s.buf.ReadFrom(res.Body)
	return res, s.buf.Bytes(), err
}

// check says whether an answer is a successful result of request id. The
// answer is application/json, or an SSE stream whose message with that id
// is the answer (server-everything answers so). Only structure is looked
// at: outside JSON strings a quote is never escaped, so the bytes
// "isError":true or "error": can only be keys, never text of the result.
func check(res *http.Response, body []byte, id int) error {
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %s: %.200s", res.Status, body)
	}
	msg := body
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		msg = nil
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(nil, len(body)+1)
		for sc.Scan() {
			if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:")); ok && hasID(d, id) {
				msg = bytes.TrimSpace(d)
				break
			}
		}
		if msg == nil {
			return fmt.Errorf("no answer to request %d in the event stream: %.200s", id, body)
		}
	}
	switch {
	case !bytes.Contains(msg, []byte(`"result":`)):
		return fmt.Errorf("not a JSON-RPC result: %.200s", msg)
	case bytes.Contains(msg, []byte(`"error":`)):
		return fmt.Errorf("JSON-RPC error: %.200s", msg)
	case bytes.Contains(msg, []byte(`"isError":true`)):
		return fmt.Errorf("tool error: %.200s", msg)
	case !hasID(msg, id):
		return fmt.Errorf("answer to another request: %.200s", msg)
	}
	return nil
}

// hasID says whether msg holds the member "id":id.
func hasID(msg []byte, id int) bool {
	want := fmt.Sprintf(`"id":%d`, id)
	return bytes.Contains(msg, []byte(want+",")) || bytes.Contains(msg, []byte(want+"}"))
}
