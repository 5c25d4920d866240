// Package prefs keeps this computer's choices about the app itself, as
// opposed to a workspace's settings: what closing the window does, which
// MCP registry the Apps catalog searches and whether Rerun looks for a new
// version by itself.
// They live in the data directory as preferences.json; a file that cannot
// be read gives the defaults (and is overwritten at the next change), so a
// damaged file never keeps the app from starting.
package prefs

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// What closing the window does.
const (
	// InBackground hides the window; the coworkers keep working and the
	// tray icon opens it again. The default.
	InBackground = "background"
	// Quit quits Rerun (asking first when coworkers are working).
	Quit = "quit"
)

// How Rerun looks for a newer version of itself.
const (
	// Daily checks the release feed shortly after start and then once a
	// day. The default.
	Daily = "daily"
	// Manual checks only when the person clicks "Check for updates".
	Manual = "manual"
)

// Prefs are the choices.
type Prefs struct {
	// WhenClosed is what closing the window does: InBackground or Quit.
	WhenClosed string `json:"when_closed"`
	// MCPRegistry is the MCP registry the Apps catalog searches: "" the
	// one Rerun was started with (the official one unless
	// RERUN_MCP_REGISTRY says otherwise), "off" none, or a company's own
	// registry's base URL. The caller checks the URL before it is set.
	MCPRegistry string `json:"mcp_registry"`
	// UpdateChecks is when Rerun checks for a newer version: Daily or
	// Manual.
	UpdateChecks string `json:"update_checks"`
}

// Change is a partial update: what is nil stays.
type Change struct {
	WhenClosed   *string `json:"when_closed"`
	MCPRegistry  *string `json:"mcp_registry"`
	UpdateChecks *string `json:"update_checks"`
}

// Defaults are the choices of a computer that made none.
func Defaults() Prefs { return Prefs{WhenClosed: InBackground, UpdateChecks: Daily} }

const fileName = "preferences.json"

// Store reads and writes one data directory's preferences.
type Store struct {
	path string
	mu   sync.Mutex // one change at a time
}

// Open is the store of the data directory dir; with none ("") it keeps
// the defaults and refuses changes.
func Open(dir string) *Store {
	if dir == "" {
		return &Store{}
	}
	return &Store{path: filepath.Join(dir, fileName)}
}

// Get returns the preferences, complete: what was never set, or cannot be
// read, is the default.
func (s *Store) Get() Prefs {
	p, _ := s.read()
	return p
}

func (s *Store) read() (Prefs, error) {
	p := Defaults()
	if s.path == "" {
		return p, nil
	}
	b, err := os.ReadFile(s.path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return p, nil
		}
		return p, err
	}
	return parse(b)
}

// parse reads a preferences file, keeping the defaults for what it lacks
// or holds that this version does not know.
func parse(b []byte) (Prefs, error) {
	p := Defaults()
	var saved Prefs
	if err := json.Unmarshal(b, &saved); err != nil {
		return p, fmt.Errorf("read %s: %w", fileName, err)
	}
	if checkWhenClosed(saved.WhenClosed) == nil {
		p.WhenClosed = saved.WhenClosed
	}
	p.MCPRegistry = strings.TrimSpace(saved.MCPRegistry)
	if checkUpdateChecks(saved.UpdateChecks) == nil {
		p.UpdateChecks = saved.UpdateChecks
	}
	return p, nil
}

func checkWhenClosed(v string) error {
	if v != InBackground && v != Quit {
		return fault.Invalid("when_closed is %q; use %q (keep working in the background) or %q", v, InBackground, Quit)
	}
	return nil
}

func checkUpdateChecks(v string) error {
	if v != Daily && v != Manual {
		return fault.Invalid("update_checks is %q; use %q (check once a day) or %q (only when you ask)", v, Daily, Manual)
	}
	return nil
}

// Set applies c and returns the preferences as saved. An invalid value
// changes nothing.
func (s *Store) Set(c Change) (Prefs, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.Get()
	if c.WhenClosed != nil {
		if err := checkWhenClosed(*c.WhenClosed); err != nil {
			return p, err
		}
	}
	if c.UpdateChecks != nil {
		if err := checkUpdateChecks(*c.UpdateChecks); err != nil {
			return p, err
		}
	}
	if c.WhenClosed != nil {
		p.WhenClosed = *c.WhenClosed
	}
	if c.UpdateChecks != nil {
		p.UpdateChecks = *c.UpdateChecks
	}
	if c.MCPRegistry != nil {
		p.MCPRegistry = strings.TrimSpace(*c.MCPRegistry)
	}
	if s.path == "" {
		return s.Get(), errors.New("save preferences: no data directory")
	}
	b, _ := json.MarshalIndent(p, "", "  ")
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return s.Get(), fmt.Errorf("save preferences: %w", err)
	}
	tmp := s.path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return s.Get(), fmt.Errorf("save preferences: %w", err)
	}
	if err := os.Rename(tmp, s.path); err != nil {
		os.Remove(tmp)
		return s.Get(), fmt.Errorf("save preferences: %w", err)
	}
	return p, nil
}
