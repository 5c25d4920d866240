package httpapi

import (
	"context"
	"net/http"

	"github.com/rerun-build/rerun-desktop/backend/relaylink"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// phoneRoutes are Settings → Phone: a one-time pairing link (and its QR
// code) for a phone, the paired phones, and removing one.
func (s *Server) phoneRoutes() {
	m := s.mux
	m.HandleFunc("POST /api/workspaces/{ws}/phone/pairing", inWorkspace(s, 201, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (relaylink.PhoneInvite, error) {
		inv, err := ws.Relay.PairPhone(ctx)
		return inv, relayUpstream(err)
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/phone/devices", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]protocol.Phone, error) {
		list, err := ws.Relay.Phones(ctx)
		return list, relayUpstream(err)
	}))
	m.HandleFunc("DELETE /api/workspaces/{ws}/phone/devices/{id}", inWorkspace(s, 204, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (none, error) {
		return none{}, relayUpstream(ws.Relay.RemovePhone(ctx, r.PathValue("id")))
	}))
}
