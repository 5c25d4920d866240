package relay_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/sync/client"
	"github.com/rerun-build/rerun-desktop/sync/protocol"
	"github.com/rerun-build/rerun-desktop/sync/relay"
	"github.com/rerun-build/rerun-desktop/sync/relay/relaytest"
)

// BenchmarkChanges pushes batches of 100 sealed records of 1 KiB through
// client.Push (one HTTP call, one transaction each), then pulls them all
// back page by page, over loopback to a relay in process; it reports
// changes a second both ways.
func BenchmarkChanges(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		store, err := relay.OpenSQLite(context.Background(), filepath.Join(b.TempDir(), "relay.db"))
		if err != nil {
			b.Fatal(err)
		}
		benchChanges(b, store)
	})
	b.Run("postgres", func(b *testing.B) {
		store, err := relay.OpenPostgres(context.Background(), postgresSchema(b))
		if err != nil {
			b.Fatal(err)
		}
		benchChanges(b, store)
	})
}

func benchChanges(b *testing.B, store relay.Store) {
	const batch, size = 100, 1 << 10
	r := relaytest.StartOn(b, store, relay.Config{})
	l := r.Link(b)
	c, err := client.New(client.Config{RelayURL: r.URL, WorkspaceID: l.WorkspaceID, Secret: l.Secret, Dir: b.TempDir(), Device: "dev_bench"})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	body := make([]byte, size)
	b.ResetTimer()
	start := time.Now()
	n := 0
	for i := 0; b.Loop(); i++ {
		changes := make([]protocol.Change, batch)
		for j := range changes {
			changes[j] = protocol.Change{Key: key(fmt.Sprint(i, "/", j)), Device: "dev_bench", Body: body}
		}
		if _, err := c.Push(ctx, changes); err != nil {
			b.Fatal(err)
		}
		n += batch
	}
	pushed := time.Since(start)
	b.StopTimer()
	start = time.Now()
	var cursor int64
	pulled := 0
	for {
		p, err := c.Pull(ctx, cursor, protocol.MaxPull)
		if err != nil {
			b.Fatal(err)
		}
		pulled += len(p.Changes)
		if len(p.Changes) > 0 {
			cursor = p.Changes[len(p.Changes)-1].Seq
		}
		if !p.More {
			break
		}
	}
	if pulled != n {
		b.Fatalf("pulled %d changes, want %d", pulled, n)
	}
	b.ReportMetric(float64(n)/pushed.Seconds(), "push-changes/s")
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "pull-changes/s")
}
