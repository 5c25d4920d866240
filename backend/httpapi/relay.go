package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/rerun-build/rerun-desktop/backend/relaylink"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// relayRoutes are Settings → Relay's routes: the workspace's link to a
// rerun-relay, its dead letters, and pairing another device.
func (s *Server) relayRoutes() {
	m := s.mux
	m.HandleFunc("GET /api/workspaces/{ws}/relay", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (relaylink.Status, error) {
		return ws.Relay.Status(), nil
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/relay", inWorkspace(s, 201, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in relaylink.LinkRequest) (relaylink.Status, error) {
		st, err := ws.Relay.Link(ctx, in)
		return st, relayUpstream(err)
	}))
	m.HandleFunc("DELETE /api/workspaces/{ws}/relay", inWorkspace(s, 204, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (none, error) {
		force := r.URL.Query().Get("force")
		return none{}, relayUpstream(ws.Relay.Unlink(ctx, force == "1" || force == "true"))
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/relay/dead-letters", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]protocol.DeadLetter, error) {
		list, err := ws.Relay.DeadLetters(ctx)
		if list == nil {
			list = []protocol.DeadLetter{}
		}
		return list, relayUpstream(err)
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/relay/dead-letters/{id}/replay", inWorkspace(s, 204, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (none, error) {
		return none{}, relayUpstream(ws.Relay.Replay(ctx, r.PathValue("id")))
	}))
	m.HandleFunc("DELETE /api/workspaces/{ws}/relay/dead-letters/{id}", inWorkspace(s, 204, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (none, error) {
		return none{}, relayUpstream(ws.Relay.DropDeadLetter(ctx, r.PathValue("id")))
	}))
	s.pairingRoutes() // relay_pair.go
	s.phoneRoutes()   // phone.go
}

// relayUpstream turns the relay's own failures into a 502.
func relayUpstream(err error) error {
	if errors.Is(err, relaylink.ErrRelay) {
		return upstreamError{err}
	}
	return err
}

// publicURL is a trigger's public URL through the workspace's relay, ""
// when it is not linked.
func publicURL(ws *workspace.Workspace, token string) string {
	if base := ws.Relay.HookBase(); base != "" {
		return base + token
	}
	return ""
}
