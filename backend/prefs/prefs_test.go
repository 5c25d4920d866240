package prefs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

func ptr(s string) *string { return &s }

func TestSetGetAcrossOpens(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir)
	if got := s.Get(); got.WhenClosed != InBackground {
		t.Fatalf("default when_closed = %q, want %q", got.WhenClosed, InBackground)
	}
	if p, err := s.Set(Change{WhenClosed: ptr(Quit)}); err != nil || p.WhenClosed != Quit {
		t.Fatalf("Set quit = %+v, %v", p, err)
	}
	if got := Open(dir).Get(); got.WhenClosed != Quit {
		t.Fatalf("reopened: when_closed = %q, want quit", got.WhenClosed)
	}
	// An empty change keeps what is there.
	if p, err := s.Set(Change{}); err != nil || p.WhenClosed != Quit {
		t.Fatalf("empty change = %+v, %v", p, err)
	}
}

func TestInvalidChangesNothing(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir)
	s.Set(Change{WhenClosed: ptr(Quit)})
	_, err := s.Set(Change{WhenClosed: ptr("hide")})
	if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), `"background"`) {
		t.Fatalf("invalid when_closed: %v, want an invalid-input error naming the choices", err)
	}
	if got := s.Get(); got.WhenClosed != Quit {
		t.Fatalf("after a refused change when_closed = %q, want quit kept", got.WhenClosed)
	}
}

// When Rerun looks for a new version: daily unless the person said only
// when asked; kept across opens; a choice that does not exist is refused
// with the ones that do, and changes nothing, not even the other fields of
// the same change.
func TestUpdateChecks(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir)
	if got := s.Get().UpdateChecks; got != Daily {
		t.Fatalf("default update_checks = %q, want %q", got, Daily)
	}
	if p, err := s.Set(Change{UpdateChecks: ptr(Manual)}); err != nil || p.UpdateChecks != Manual || p.WhenClosed != InBackground {
		t.Fatalf("Set manual = %+v, %v", p, err)
	}
	if got := Open(dir).Get().UpdateChecks; got != Manual {
		t.Fatalf("reopened: update_checks = %q, want manual", got)
	}
	_, err := s.Set(Change{WhenClosed: ptr(Quit), UpdateChecks: ptr("weekly")})
	if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), `"daily"`) || !strings.Contains(err.Error(), `"manual"`) {
		t.Fatalf("invalid update_checks: %v, want an invalid-input error naming the choices", err)
	}
	if got := Open(dir).Get(); got.UpdateChecks != Manual || got.WhenClosed != InBackground {
		t.Fatalf("after a refused change: %+v, want manual and background kept", got)
	}
	// A value this version does not know (a newer one wrote it) reads as
	// the default, and the other choices stay.
	os.WriteFile(filepath.Join(dir, fileName), []byte(`{"when_closed":"quit","update_checks":"hourly"}`), 0o600)
	if got := Open(dir).Get(); got.UpdateChecks != Daily || got.WhenClosed != Quit {
		t.Fatalf("unknown saved value: %+v, want daily and quit", got)
	}
}

func TestDamagedFileGivesDefaults(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, fileName), []byte("{not json"), 0o600)
	s := Open(dir)
	if got := s.Get(); got != Defaults() {
		t.Fatalf("damaged file: %+v, want the defaults", got)
	}
	if p, err := s.Set(Change{WhenClosed: ptr(Quit)}); err != nil || p.WhenClosed != Quit || Open(dir).Get().WhenClosed != Quit {
		t.Fatalf("a change over a damaged file: %+v, %v", p, err)
	}
}

// Whatever the file holds, reading it never fails open: the result is
// always a valid choice.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"when_closed":"quit"}`, `{"when_closed":"x"}`, `[]`, `{"when_closed":7}`, ``, `null`,
		`{"update_checks":"manual"}`, `{"update_checks":"Daily"}`, `{"update_checks":null,"when_closed":"quit"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, _ := parse(b)
		if checkWhenClosed(p.WhenClosed) != nil {
			t.Fatalf("%q gave when_closed %q", b, p.WhenClosed)
		}
		if checkUpdateChecks(p.UpdateChecks) != nil {
			t.Fatalf("%q gave update_checks %q", b, p.UpdateChecks)
		}
	})
}
