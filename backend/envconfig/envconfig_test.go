package envconfig

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestDataDirPrecedence(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("RERUN_HOME", "")
	if runtime.GOOS == "linux" {
		if got, _ := DataDir(""); got != filepath.Join(home, ".local", "share", "rerun") {
			t.Errorf("default = %q, want ~/.local/share/rerun", got)
		}
		t.Setenv("XDG_DATA_HOME", "/xdg")
		if got, _ := DataDir(""); got != "/xdg/rerun" {
			t.Errorf("with XDG_DATA_HOME = %q, want /xdg/rerun", got)
		}
	}
	t.Setenv("RERUN_HOME", "/env/rerun")
	if got, _ := DataDir(""); got != "/env/rerun" {
		t.Errorf("with RERUN_HOME = %q, want /env/rerun", got)
	}
	if got, _ := DataDir("/flag/dir"); got != "/flag/dir" {
		t.Errorf("flag over RERUN_HOME = %q, want /flag/dir", got)
	}
	if got, _ := DataDir("rel"); !filepath.IsAbs(got) {
		t.Errorf("relative flag = %q, want an absolute path", got)
	}
}

func TestEmbedder(t *testing.T) {
	t.Setenv("RERUN_EMBED_BASE_URL", " http://localhost:11434/v1 ")
	t.Setenv("RERUN_EMBED_API_KEY", "k")
	t.Setenv("RERUN_EMBED_MODEL", "nomic-embed-text")
	url, key, model := Embedder()
	if url != "http://localhost:11434/v1" || key != "k" || model != "nomic-embed-text" {
		t.Errorf("got %q %q %q, want the trimmed values of RERUN_EMBED_*", url, key, model)
	}
}

func TestKeychain(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  bool
	}{
		{"", true},
		{"on", true},
		{"off", false},
		{" OFF ", false},
		{"0", false},
		{"false", false},
		{"no", false},
	} {
		t.Run(tc.value, func(t *testing.T) {
			t.Setenv("RERUN_KEYCHAIN", tc.value)
			if got := Keychain(); got != tc.want {
				t.Errorf("RERUN_KEYCHAIN=%q: Keychain() = %v, want %v", tc.value, got, tc.want)
			}
		})
	}
}

func TestTimezone(t *testing.T) {
	dir := t.TempDir()
	berlin := filepath.Join(dir, "localtime-berlin")
	if err := os.Symlink("/usr/share/zoneinfo/Europe/Berlin", berlin); err != nil {
		t.Fatal(err)
	}
	macOS := filepath.Join(dir, "localtime-macos")
	if err := os.Symlink("/var/db/timezone/zoneinfo/America/New_York", macOS); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "localtime-file")
	os.WriteFile(plain, []byte("TZif"), 0o644)
	for _, tc := range []struct {
		name, tz, localtime, want string
	}{
		{"TZ names a zone", "Asia/Tokyo", berlin, "Asia/Tokyo"},
		{"TZ with a colon", ":Asia/Tokyo", berlin, "Asia/Tokyo"},
		{"TZ as a zoneinfo path", "/usr/share/zoneinfo/Asia/Tokyo", berlin, "Asia/Tokyo"},
		{"unknown TZ: the system zone", "Mars/Olympus", berlin, "Europe/Berlin"},
		{"no TZ: the link", "", berlin, "Europe/Berlin"},
		{"macOS link", "", macOS, "America/New_York"},
		{"no link", "", plain, "UTC"},
		{"nothing at all", "", filepath.Join(dir, "missing"), "UTC"},
		{"Local is no name", "Local", filepath.Join(dir, "missing"), "UTC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := timezone(tc.tz, tc.localtime); got != tc.want {
				t.Errorf("timezone(%q, %s) = %q, want %q", tc.tz, filepath.Base(tc.localtime), got, tc.want)
			}
		})
	}
}
