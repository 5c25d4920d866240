// Package autostart owns starting Rerun when the person logs in: on Linux
// an XDG autostart entry (~/.config/autostart/rerun.desktop, under
// $XDG_CONFIG_HOME when set) that launches `rerun --hidden`, so Rerun starts
// in the tray without a window. The entry's presence is the setting.
package autostart

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Entry is the start-at-login entry of one Rerun binary and data directory.
type Entry struct {
	// Exec is the binary to launch; Args follow it (--hidden, the data
	// directory).
	Exec string
	Args []string
	// Dir is where the entry goes: $XDG_CONFIG_HOME/autostart, else
	// ~/.config/autostart.
	Dir string
}

// State is what the Settings show.
type State struct {
	Enabled   bool   `json:"enabled"`
	Available bool   `json:"available"` // this OS and build can start at login
	Path      string `json:"path"`      // the entry's file, when available
}

// ErrUnavailable says this OS has no start-at-login here yet.
var ErrUnavailable = fault.Invalid("start at login is not available on this system yet; start Rerun yourself after logging in")

// ForBinary is the entry launching this process's binary in the tray on
// dataDir, or nil where there is no entry to write (not Linux, or no home).
func ForBinary(dataDir string) *Entry {
	if runtime.GOOS != "linux" {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	dir := os.Getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(dir) { // the spec: a relative value is invalid
		home, err := os.UserHomeDir()
		if err != nil {
			return nil
		}
		dir = filepath.Join(home, ".config")
	}
	return &Entry{Exec: exe, Args: []string{"--hidden", "--data-dir", dataDir}, Dir: filepath.Join(dir, "autostart")}
}

func (e *Entry) path() string { return filepath.Join(e.Dir, "rerun.desktop") }

// State reads whether the entry is there.
func (e *Entry) State() State {
	if e == nil {
		return State{}
	}
	_, err := os.Stat(e.path())
	return State{Enabled: err == nil, Available: true, Path: e.path()}
}

// Set writes (on) or removes the entry.
func (e *Entry) Set(on bool) (State, error) {
	if e == nil {
		return State{}, ErrUnavailable
	}
	if !on {
		if err := os.Remove(e.path()); err != nil && !errors.Is(err, os.ErrNotExist) {
			return e.State(), fmt.Errorf("remove the start-at-login entry: %w", err)
		}
		return e.State(), nil
	}
	if err := os.MkdirAll(e.Dir, 0o755); err != nil {
		return e.State(), fmt.Errorf("create %s: %w", e.Dir, err)
	}
	tmp := e.path() + ".tmp"
	if err := os.WriteFile(tmp, []byte(e.desktopFile()), 0o644); err != nil {
		return e.State(), fmt.Errorf("write the start-at-login entry: %w", err)
	}
	if err := os.Rename(tmp, e.path()); err != nil {
		os.Remove(tmp)
		return e.State(), fmt.Errorf("write the start-at-login entry: %w", err)
	}
	return e.State(), nil
}

// desktopFile is the entry (Desktop Entry Specification 1.5).
func (e *Entry) desktopFile() string {
	words := []string{execArg(e.Exec)}
	for _, a := range e.Args {
		words = append(words, execArg(a))
	}
	return "[Desktop Entry]\n" +
		"Type=Application\n" +
		"Name=Rerun\n" +
		"Comment=Starts Rerun in the tray so your coworkers keep working\n" +
		"Exec=" + escapeValue(strings.Join(words, " ")) + "\n" +
		"Icon=rerun\n" +
		"Terminal=false\n" +
		"X-GNOME-Autostart-enabled=true\n"
}

// execArg quotes one argument of an Exec key: inside double quotes, with
// ", `, $ and \ escaped by a backslash, when it has a reserved character;
// % doubled (field codes) either way.
func execArg(a string) string {
	a = strings.ReplaceAll(a, "%", "%%")
	if a != "" && !strings.ContainsAny(a, " \t\n\"'\\><~|&;$*?#()`") {
		return a
	}
	return `"` + strings.NewReplacer(`"`, `\"`, "`", "\\`", `$`, `\$`, `\`, `\\`).Replace(a) + `"`
}

// escapeValue escapes a string value of a desktop file: a backslash
// doubles, a line break becomes \n.
func escapeValue(v string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\t", `\t`, "\r", `\r`).Replace(v)
}
