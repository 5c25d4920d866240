package client_test

// Two rerun-relay processes on one PostgreSQL database, as behind a load
// balancer: webhooks taken by either reach the desktop, connected to one
// of them, exactly once; a change pushed through one reaches a device
// connected to the other at once (LISTEN/NOTIFY between the processes).

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/internal/waittest"
	"github.com/rerun-build/rerun-desktop/sync/client"
	"github.com/rerun-build/rerun-desktop/sync/protocol"
	"github.com/rerun-build/rerun-desktop/sync/relay/relaytest"
)

// startRelayPG runs a rerun-relay process on the PostgreSQL store at u.
func startRelayPG(t *testing.T, name, u string) *relayProc {
	t.Helper()
	p := start(t, name, exec.Command(relayBinary(t), "-postgres", u, "-listen", "127.0.0.1:0", "-v"))
	url, _, _ := strings.Cut(p.waitFor("rerun-relay listening on"), " ")
	return &relayProc{proc: p, addr: strings.TrimPrefix(url, "http://"), URL: url}
}

func TestTwoRelayProcesses(t *testing.T) {
	bin := relayBinary(t)
	u := relaytest.PostgresSchema(t)
	out, err := exec.Command(bin, "-postgres", u, "-new-workspace").Output()
	if err != nil {
		t.Fatalf("rerun-relay -postgres … -new-workspace: %v", err)
	}
	var l protocol.Link
	if _, err := fmt.Sscanf(string(out), "workspace %s\nsecret %s\n", &l.WorkspaceID, &l.Secret); err != nil {
		t.Fatalf("rerun-relay -new-workspace printed %q: %v", out, err)
	}
	a, b := startRelayPG(t, "relay-a", u), startRelayPG(t, "relay-b", u)

	t.Run("webhooks", func(t *testing.T) {
		dir := t.TempDir()
		startDesktopProc(t, b.URL, l, dir, "", "tok").waitFor("TOKENS 1")
		const n = 200
		var wg sync.WaitGroup
		jobs := make(chan int)
		for range 4 {
			wg.Go(func() {
				for i := range jobs {
					r := []*relayProc{a, b}[i%2] // round robin, as a load balancer
					if got := post(t, r.URL+"/h/tok", fmt.Sprintf(`{"n":%d}`, i), nil); got != http.StatusAccepted {
						t.Errorf("webhook %d through %s: got %d, want 202", i, r.name, got)
					}
				}
			})
		}
		for i := range n {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
		in := openIntake(t, dir)
		waittest.Progress(t, "deliveries", 30*time.Second, func() (int, bool) { runs := in.counts(t).Runs; return runs, runs >= n })
		settled(t, a.URL) // the queue depth is the shared store's
		want(t, in.counts(t), counts{Runs: n, Calls: n, CalledDeliveries: n})
	})

	t.Run("changes", func(t *testing.T) {
		heard := make(chan int64, 10)
		device := func(id, relayURL string, on func(int64)) *client.Client {
			c, err := client.New(client.Config{RelayURL: relayURL, WorkspaceID: l.WorkspaceID, Secret: l.Secret,
				Dir: t.TempDir(), Device: id, OnChanges: on, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { c.Serve(ctx); close(done) }()
			t.Cleanup(func() { cancel(); <-done })
			return c
		}
		one := device("dev_one", a.URL, nil)
		two := device("dev_two", b.URL, func(last int64) { heard <- last })
		if got := <-heard; got != 0 {
			t.Fatalf("dev_two heard %d on connecting, want 0", got)
		}
		sealed := []byte("sealed by dev_one")
		last, err := one.Push(context.Background(), []protocol.Change{{Key: strings.Repeat("0f", 32), Device: "dev_one", Body: sealed}})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-heard:
			if got != last {
				t.Fatalf("dev_two heard %d, want %d", got, last)
			}
		case <-time.After(waittest.Patience):
			t.Fatal("dev_two, on relay b, did not hear of the push through relay a")
		}
		page, err := two.Pull(context.Background(), 0, 0)
		if err != nil || len(page.Changes) != 1 || string(page.Changes[0].Body) != string(sealed) || page.Last != last {
			t.Fatalf("pull through relay b: got %+v (%v), want the change at %d", page, err, last)
		}
	})
}
