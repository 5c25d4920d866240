package agentfile

import (
	"errors"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

func sample() File {
	return File{Name: "Ada", Handle: "ada", Template: []byte("PK"),
		Souls: []Soul{{Version: 1, Body: "You help.", CreatedAt: "2026-01-01T00:00:00Z"}},
		Memories: []Memory{
			{ID: "mem_a", Text: "EUR invoices", State: "superseded", SupersededBy: "mem_b", Strength: 0.4, ReinforcedAt: "x", CreatedAt: "x", UpdatedAt: "x"},
			{ID: "mem_b", Text: "USD invoices", State: "active", Supersedes: "mem_a", Strength: 1.2, Recalls: 3, ReinforcedAt: "x", CreatedAt: "x", UpdatedAt: "x"},
		}}
}

func TestRoundTrip(t *testing.T) {
	b, err := Marshal(sample())
	if err != nil {
		t.Fatal(err)
	}
	f, err := Read(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Memories) != 2 || f.Memories[1].Recalls != 3 || string(f.Template) != "PK" {
		t.Fatalf("got %+v", f)
	}
}

func TestRefuses(t *testing.T) {
	for _, c := range []struct {
		name, want string
		edit       func(*File)
		raw        string
	}{
		{name: "a template", raw: `{"schema_version":1,"name":"x"}`, want: "not a Rerun agent file"},
		{name: "not JSON", raw: `PK\x03\x04`, want: "not valid JSON"},
		{name: "dangling history", edit: func(f *File) { f.Memories[0].SupersededBy = "mem_gone" }, want: "does not hold"},
		{name: "duplicate memory", edit: func(f *File) { f.Memories[1].ID = "mem_a" }, want: "twice"},
		{name: "bad state", edit: func(f *File) { f.Memories[0].State = "forever" }, want: "schema"},
		{name: "bad handle", edit: func(f *File) { f.Handle = "../etc" }, want: "schema"},
		{name: "unknown field", raw: `{"format":"rerun-agent","version":1,"name":"a","handle":"a","template":"","souls":[],"memories":[],"variables":{"X":"y"}}`, want: "schema"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := []byte(c.raw)
			if c.edit != nil {
				f := sample()
				c.edit(&f)
				b, _ = Marshal(f)
			}
			_, err := Read(b)
			if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an invalid-input error saying %q", err, c.want)
			}
		})
	}
}

func FuzzRead(f *testing.F) {
	b, _ := Marshal(sample())
	f.Add(b)
	f.Add([]byte(`{"format":"rerun-agent"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Read(data)
		if err != nil {
			if !errors.Is(err, fault.ErrInvalid) {
				t.Fatalf("got %v, not an invalid-input error", err)
			}
			return
		}
		ids := map[string]bool{}
		for _, m := range got.Memories {
			ids[m.ID] = true
		}
		for _, m := range got.Memories {
			if m.Supersedes != "" && !ids[m.Supersedes] {
				t.Fatalf("accepted a dangling reference %q", m.Supersedes)
			}
		}
	})
}
