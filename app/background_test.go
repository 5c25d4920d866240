package app

import (
	"errors"
	"testing"
)

// The hint that Rerun keeps running shows once per data directory, and
// again only if it could not be shown.
func TestBackgroundHintOnce(t *testing.T) {
	dir := t.TempDir()
	var shown []string
	fail := true
	send := func(id, title, body string) error {
		if fail {
			return errors.New("no notification daemon")
		}
		shown = append(shown, title)
		return nil
	}
	if err := backgroundHint(dir, send); err == nil {
		t.Fatal("a hint that failed to show reported no error")
	}
	fail = false
	for i := 0; i < 3; i++ {
		if err := backgroundHint(dir, send); err != nil {
			t.Fatal(err)
		}
	}
	if len(shown) != 1 || shown[0] != "Rerun keeps working" {
		t.Errorf("hints shown = %q, want one", shown)
	}
	if err := backgroundHint(t.TempDir(), send); err != nil || len(shown) != 2 {
		t.Errorf("another data directory: %v, %d hints; want its own", err, len(shown))
	}
}
