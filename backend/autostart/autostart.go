// Package autostart owns starting Rerun when the person logs in, with
// `rerun --hidden` so Rerun starts in the tray without a window. Each OS
// keeps the entry its own way, and the entry's presence is the setting:
//
//   - Linux: an XDG autostart entry, ~/.config/autostart/rerun.desktop
//     (under $XDG_CONFIG_HOME when set);
//   - macOS: a LaunchAgent, ~/Library/LaunchAgents/build.rerun.desktop.plist,
//     loaded by launchd at the next login;
//   - Windows: a value "Rerun" under the per-user Run key,
//     HKCU\Software\Microsoft\Windows\CurrentVersion\Run.
package autostart

import (
	"encoding/xml"
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
	// OS is whose kind of entry this is: "linux", "darwin" or "windows".
	OS string
	// Dir is where the entry's file goes: $XDG_CONFIG_HOME/autostart, else
	// ~/.config/autostart, on Linux; ~/Library/LaunchAgents on macOS.
	// Windows keeps the entry in the registry (runKey) instead.
	Dir string
	// runKey is the registry's Run key on Windows; tests give a map.
	runKey runKey
}

// runKey is the per-user Run key of the Windows registry: one value per
// program, its command line.
type runKey interface {
	Get(name string) (string, bool, error)
	Set(name, value string) error
	Delete(name string) error
}

const (
	// launchAgentLabel names the LaunchAgent; it is the app's bundle id.
	launchAgentLabel = "build.rerun.desktop"
	// runValue is the name of the Run key's value.
	runValue   = "Rerun"
	runKeyPath = `HKCU\Software\Microsoft\Windows\CurrentVersion\Run`
)

// State is what the Settings show.
type State struct {
	Enabled   bool   `json:"enabled"`
	Available bool   `json:"available"` // this OS and build can start at login
	Path      string `json:"path"`      // the entry's file, when available
}

// ErrUnavailable says this OS has no start-at-login here yet.
var ErrUnavailable = fault.Invalid("start at login is not available on this system yet; start Rerun yourself after logging in")

// ForBinary is the entry launching this process's binary in the tray on
// dataDir, or nil where there is no entry to write (another OS, or no home).
func ForBinary(dataDir string) *Entry {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	e := &Entry{Exec: exe, Args: []string{"--hidden", "--data-dir", dataDir}, OS: runtime.GOOS}
	switch runtime.GOOS {
	case "linux":
		dir := os.Getenv("XDG_CONFIG_HOME")
		if !filepath.IsAbs(dir) { // the spec: a relative value is invalid
			home, err := os.UserHomeDir()
			if err != nil {
				return nil
			}
			dir = filepath.Join(home, ".config")
		}
		e.Dir = filepath.Join(dir, "autostart")
	case "darwin":
		home, err := os.UserHomeDir()
		if err != nil {
			return nil
		}
		e.Dir = filepath.Join(home, "Library", "LaunchAgents")
	case "windows":
		e.runKey = userRunKey()
		if e.runKey == nil {
			return nil
		}
	default:
		return nil
	}
	return e
}

func (e *Entry) path() string {
	switch e.OS {
	case "darwin":
		return filepath.Join(e.Dir, launchAgentLabel+".plist")
	case "windows":
		return runKeyPath + `\` + runValue
	}
	return filepath.Join(e.Dir, "rerun.desktop")
}

// State reads whether the entry is there.
func (e *Entry) State() State {
	if e == nil {
		return State{}
	}
	if e.OS == "windows" {
		_, ok, err := e.runKey.Get(runValue)
		return State{Enabled: ok && err == nil, Available: true, Path: e.path()}
	}
	_, err := os.Stat(e.path())
	return State{Enabled: err == nil, Available: true, Path: e.path()}
}

// Set writes (on) or removes the entry.
func (e *Entry) Set(on bool) (State, error) {
	if e == nil {
		return State{}, ErrUnavailable
	}
	if e.OS == "windows" {
		var err error
		if on {
			err = e.runKey.Set(runValue, e.commandLine())
		} else {
			err = e.runKey.Delete(runValue)
		}
		if err != nil {
			return e.State(), fmt.Errorf("change the start-at-login entry %s: %w", e.path(), err)
		}
		return e.State(), nil
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
	content := e.desktopFile()
	if e.OS == "darwin" {
		content = e.launchAgent()
	}
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
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

// launchAgent is the entry on macOS: a property list launchd loads at login
// (RunAtLoad), running the binary once with its arguments, not keeping it
// alive after the person quits.
func (e *Entry) launchAgent() string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>` + launchAgentLabel + `</string>
	<key>ProgramArguments</key>
	<array>
`)
	for _, a := range append([]string{e.Exec}, e.Args...) {
		b.WriteString("\t\t<string>" + xmlText(a) + "</string>\n")
	}
	b.WriteString(`	</array>
	<key>RunAtLoad</key>
	<true/>
	<key>KeepAlive</key>
	<false/>
	<key>ProcessType</key>
	<string>Interactive</string>
</dict>
</plist>
`)
	return b.String()
}

// xmlText escapes a string for a property list's <string>.
func xmlText(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// commandLine is the entry on Windows: the Run key's value, quoted so
// CommandLineToArgvW (what the Go runtime and most programs read their
// arguments with) gives back each argument as it was.
func (e *Entry) commandLine() string {
	words := []string{windowsArg(e.Exec)}
	for _, a := range e.Args {
		words = append(words, windowsArg(a))
	}
	return strings.Join(words, " ")
}

// windowsArg quotes one argument for CommandLineToArgvW: inside double
// quotes when it is empty or has a space, tab or quote; a quote is
// preceded by a backslash, and backslashes before a quote (or the closing
// one) are doubled.
func windowsArg(a string) string {
	if a != "" && !strings.ContainsAny(a, " \t\n\v\"") {
		return a
	}
	var b strings.Builder
	b.WriteByte('"')
	slashes := 0
	for i := 0; i < len(a); i++ {
		switch c := a[i]; c {
		case '\\':
			slashes++
		case '"':
			b.WriteString(strings.Repeat(`\`, 2*slashes+1))
			b.WriteByte('"')
			slashes = 0
		default:
			b.WriteString(strings.Repeat(`\`, slashes))
			slashes = 0
			b.WriteByte(c)
		}
	}
	b.WriteString(strings.Repeat(`\`, 2*slashes))
	b.WriteByte('"')
	return b.String()
}
