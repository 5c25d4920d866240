package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/update"
)

// updateRoutes: "Check for updates" in the About box. Only on the person's
// click; it reads the feed and says what it found, it installs nothing.
func (s *Server) updateRoutes() {
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
		msg := fault.Message(err)
		if errors.Is(err, fault.ErrInvalid) {
			msg = "could not check for updates: " + msg
		}
		return update.Status{}, upstreamError{errors.New(msg)}
	}))
}
