package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/retention"
	"github.com/rerun-build/rerun-desktop/backend/search"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// pinBody is a run's pin, set and read.
type pinBody struct {
	Pinned bool `json:"pinned"`
}

// searchRoutes are full-text search over the runs and notifications, the
// retention settings, pinning runs and disk use.
func (s *Server) searchRoutes() {
	m := s.mux
	m.HandleFunc("GET /api/workspaces/{ws}/search", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (search.Result, error) {
		o, err := searchOptions(r)
		if err != nil {
			return search.Result{}, err
		}
		if o.AgentID != "" {
			if _, err := ws.Agents.Get(ctx, o.AgentID); err != nil {
				return search.Result{}, err
			}
		}
		return ws.Search.Search(ctx, o)
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/retention", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (retention.Settings, error) {
		return ws.Retention.Settings(ctx)
	}))
	m.HandleFunc("PUT /api/workspaces/{ws}/retention", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in retention.Settings) (retention.Settings, error) {
		return ws.Retention.SetSettings(ctx, in)
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/runs/{rid}/pin", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (pinBody, error) {
		if _, err := ws.Runs.Get(ctx, r.PathValue("rid")); err != nil {
			return pinBody{}, err
		}
		p, err := ws.Retention.Pinned(ctx, r.PathValue("rid"))
		return pinBody{Pinned: p}, err
	}))
	m.HandleFunc("PUT /api/workspaces/{ws}/runs/{rid}/pin", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in pinBody) (pinBody, error) {
		if err := ws.Retention.Pin(ctx, r.PathValue("rid"), in.Pinned); err != nil {
			return pinBody{}, err
		}
		return in, nil
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/disk", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (retention.Disk, error) {
		return ws.Retention.DiskUse(ctx)
	}))
}

// searchOptions reads a search from the query string: q, agent (an agent
// id), source, status, since and until (RFC 3339, or YYYY-MM-DD in the
// local time zone: since from that day's start, until through its end),
// before (the cursor, a hit's n) and limit.
func searchOptions(r *http.Request) (search.Options, error) {
	q := r.URL.Query()
	o := search.Options{Query: q.Get("q"), AgentID: q.Get("agent"), Source: q.Get("source"), Status: q.Get("status")}
	var err error
	if o.Since, err = searchTime("since", q.Get("since"), false); err != nil {
		return o, err
	}
	if o.Until, err = searchTime("until", q.Get("until"), true); err != nil {
		return o, err
	}
	if !o.Since.IsZero() && !o.Until.IsZero() && !o.Since.Before(o.Until) {
		return o, fault.Invalid("since %s is not before until %s; swap them or widen the range", q.Get("since"), q.Get("until"))
	}
	if v := q.Get("before"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return o, fault.Invalid("before %q must be a positive number: the n of the last hit of the previous page", v)
		}
		o.Before = n
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > 200 {
			return o, fault.Invalid("limit %q must be a number between 1 and 200 (default 50)", v)
		}
		o.Limit = n
	}
	return o, nil
}

// searchTime reads a since or until bound; a date as until means through
// the end of that day.
func searchTime(name, v string, end bool) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if d, err := time.ParseInLocation(time.DateOnly, v, time.Local); err == nil {
		if end {
			d = d.AddDate(0, 0, 1)
		}
		return d, nil
	}
	return time.Time{}, fault.Invalid("%s %q must be an RFC 3339 time (2026-11-30T09:00:00Z) or a date (2026-11-30)", name, v)
}
