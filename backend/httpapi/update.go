package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/prefs"
	"github.com/rerun-build/rerun-desktop/backend/update"
)

// lastUpdate is what the last check found (GET /api/update/last), and
// how Rerun checks: "daily", "manual" (only on a click), or "off" (this
// build checks no feed; Off says why).
type lastUpdate struct {
	update.Result
	Checks string `json:"checks"`
	Off    string `json:"off,omitempty"`
}

// updateRoutes: "Check for updates" in the About box, then "Download and
// verify" and "Open installer", and what the last check found, automatic
// (daily, update.Watch) or clicked, read without the network. Downloading
// and opening are only on the person's click: the download fetches the
// package into the data directory's updates folder and keeps it only when
// the release key signed it; opening hands that verified file to the
// system (the package manager, the installer), which asks the person
// again. Nothing installs itself.
func (s *Server) updateRoutes() {
	s.mux.HandleFunc("GET /api/update/last", endpoint(s, 200, func(context.Context, *http.Request, none) (lastUpdate, error) {
		if s.cfg.Updates == nil {
			return lastUpdate{Checks: "off", Off: "update checks are off in this build"}, nil
		}
		if err := s.cfg.Updates.Off(); err != nil {
			return lastUpdate{Checks: "off", Off: err.Error()}, nil
		}
		checks := prefs.Manual
		if s.cfg.Updates.Daily() {
			checks = prefs.Daily
		}
		return lastUpdate{Result: s.cfg.Updates.Last(), Checks: checks}, nil
	}))
	s.mux.HandleFunc("POST /api/update/download", endpoint(s, 200, func(ctx context.Context, _ *http.Request, _ none) (update.Downloaded, error) {
		if s.cfg.Updates == nil {
			return update.Downloaded{}, fault.Conflict("update checks are off in this build")
		}
		if s.dataDir == "" {
			return update.Downloaded{}, fault.Conflict("there is no data folder to download the update into")
		}
		d, err := s.cfg.Updates.Checker().Download(ctx, filepath.Join(s.dataDir, "updates"))
		switch {
		case err == nil:
			s.updateMu.Lock()
			s.downloaded = d
			s.updateMu.Unlock()
			s.log.Info("update downloaded and verified", "version", d.Version, "path", d.Path)
			return d, nil
		case errors.Is(err, update.ErrOff), errors.Is(err, update.ErrNoKey):
			return update.Downloaded{}, fault.Conflict("%s", err.Error())
		case errors.Is(err, fault.ErrInvalid), errors.Is(err, context.Canceled):
			return update.Downloaded{}, err
		}
		s.log.Warn("update download refused", "err", err)
		return update.Downloaded{}, upstreamError{errors.New(fault.Message(err))}
	}))
	s.mux.HandleFunc("POST /api/update/open", endpoint(s, 200, func(ctx context.Context, _ *http.Request, _ none) (update.Downloaded, error) {
		s.updateMu.Lock()
		d := s.downloaded
		s.updateMu.Unlock()
		if d.Path == "" {
			return d, fault.Conflict("no update was downloaded and verified yet; download it first")
		}
		open := s.cfg.OpenFile
		if open == nil {
			return d, fault.Conflict("opening files is not available here; the verified package is %s", d.Path)
		}
		if err := open(d.Path); err != nil {
			return d, fmt.Errorf("open %s: %w", d.Path, err)
		}
		return d, nil
	}))
	s.mux.HandleFunc("GET /api/update", endpoint(s, 200, func(ctx context.Context, _ *http.Request, _ none) (update.Status, error) {
		if s.cfg.Updates == nil {
			return update.Status{}, fault.Conflict("update checks are off in this build")
		}
		st, err := s.cfg.Updates.Check(ctx)
		switch {
		case err == nil:
			return st, nil
		case errors.Is(err, update.ErrOff), errors.Is(err, update.ErrNoKey):
			return update.Status{}, fault.Conflict("%s", err.Error())
		case errors.Is(err, context.Canceled):
			return update.Status{}, err
		}
		// The feed's fault, not the caller's: a 502 saying what went wrong.
		return update.Status{}, upstreamError{errors.New(update.Reason(err))}
	}))
}
