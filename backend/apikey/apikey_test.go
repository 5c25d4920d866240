package apikey

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/store/storetest"
)

func TestCreateAuthenticateRevoke(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	s := NewService(db)
	plain, k, err := s.Create(ctx, "Claude Code")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(plain, "rrk_") || len(plain) < 50 || k.Prefix != plain[:10] {
		t.Fatalf("key %q prefix %q", plain, k.Prefix)
	}
	var stored int
	db.QueryRow(`SELECT count(*) FROM api_keys WHERE hash = ? OR prefix = ?`, plain, plain).Scan(&stored)
	if stored != 0 {
		t.Fatal("the key itself is stored")
	}
	if got, ok := s.Authenticate(ctx, plain); !ok || got.ID != k.ID {
		t.Fatalf("Authenticate(good) = %+v %v", got, ok)
	}
	list, _ := s.List(ctx)
	if len(list) != 1 || list[0].LastUsedAt == nil {
		t.Errorf("list after use = %+v, want last used set", list)
	}
	for name, bad := range map[string]string{
		"empty": "", "other key": "rrk_" + strings.Repeat("a", 52), "prefix only": plain[:10],
		"one char off": plain[:len(plain)-1] + "x", "no prefix": plain[4:],
	} {
		if _, ok := s.Authenticate(ctx, bad); ok {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := s.Revoke(ctx, k.Prefix); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Authenticate(ctx, plain); ok {
		t.Error("revoked key still works")
	}
	if _, err := s.Revoke(ctx, "key_nope"); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("revoke unknown: %v", err)
	}
	if _, _, err := s.Create(ctx, " "); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("unnamed key: %v", err)
	}
}

func TestSetToolSet(t *testing.T) {
	ctx := context.Background()
	s := NewService(storetest.Open(t))
	plain, k, _ := s.Create(ctx, "Cursor")
	if k.ToolSet != ToolsFull {
		t.Fatalf("a new key's tool set = %q, want %q", k.ToolSet, ToolsFull)
	}
	var seen []string
	s.Watch(func(k Key) { seen = append(seen, k.ToolSet) })
	got, err := s.SetToolSet(ctx, k.Prefix, ToolsCompact)
	if err != nil || got.ToolSet != ToolsCompact {
		t.Fatalf("SetToolSet = %+v %v", got, err)
	}
	if a, _ := s.Authenticate(ctx, plain); a.ToolSet != ToolsCompact {
		t.Errorf("authenticated key's tool set = %q, want compact", a.ToolSet)
	}
	if _, err := s.SetToolSet(ctx, k.ID, "tiny"); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("unknown tool set: %v, want ErrInvalid", err)
	}
	s.Revoke(ctx, k.ID)
	if _, err := s.SetToolSet(ctx, k.ID, ToolsFull); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("revoked key: %v, want ErrNotFound", err)
	}
	if len(seen) != 1 || seen[0] != ToolsCompact {
		t.Errorf("watchers saw %v, want one change to compact", seen)
	}
}

// TestRevokedKeyRefusedAtOnce: Authenticate answers from its cache, and a
// revoke (or a tool-set change) is seen by the very next call.
func TestRevokedKeyRefusedAtOnce(t *testing.T) {
	ctx := context.Background()
	s := NewService(storetest.Open(t))
	plain, k, err := s.Create(ctx, "cached")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ { // the second and third answers come from the cache
		if _, ok := s.Authenticate(ctx, plain); !ok {
			t.Fatalf("call %d refused a live key", i)
		}
	}
	if _, err := s.SetToolSet(ctx, k.ID, ToolsCompact); err != nil {
		t.Fatal(err)
	}
	if got, ok := s.Authenticate(ctx, plain); !ok || got.ToolSet != ToolsCompact {
		t.Fatalf("after SetToolSet: %+v %v, want the compact set", got, ok)
	}
	if _, err := s.Revoke(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Authenticate(ctx, plain); ok {
		t.Fatal("a revoked key was accepted from the cache")
	}
}

// TestRevokedElsewhereRefusedAtOnce: a key revoked by another process
// (`rerun key revoke` beside a running server, its own connections to the
// same file) is refused by the next call here, though it was cached.
func TestRevokedElsewhereRefusedAtOnce(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	here := NewService(db)
	plain, k, err := here.Create(ctx, "cached here")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, ok := here.Authenticate(ctx, plain); !ok {
			t.Fatalf("call %d refused a live key", i)
		}
	}
	other, err := store.Open(ctx, db.Path(), store.WorkspaceMigrations())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := NewService(other).Revoke(ctx, k.Prefix); err != nil {
		t.Fatal(err)
	}
	if _, ok := here.Authenticate(ctx, plain); ok {
		t.Fatal("a key revoked by another process was accepted from the cache")
	}
}

func BenchmarkAuthenticate(b *testing.B) {
	ctx := context.Background()
	s := NewService(storetest.Open(b))
	plain, _, err := s.Create(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, ok := s.Authenticate(ctx, plain); !ok {
			b.Fatal("refused")
		}
	}
}
