package httpapi

import (
	"context"
	"net/http"

	"github.com/rerun-build/rerun-desktop/backend/relaylink"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// pairingRoutes pair another device with a workspace (a pairing code made
// here, pasted there), join one with such a code, and pick the device that
// takes the webhooks and fires the schedules.
func (s *Server) pairingRoutes() {
	m := s.mux
	m.HandleFunc("POST /api/workspaces/{ws}/relay/pairing", inWorkspace(s, 201, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (pairingBody, error) {
		code, err := ws.Relay.Pairing(ctx, ws.Info().Name)
		return pairingBody{Code: code}, err
	}))
	m.HandleFunc("POST /api/relay/join", endpoint(s, 201, func(ctx context.Context, r *http.Request, in joinBody) (workspace.Info, error) {
		info, err := s.cfg.Home.JoinWithPairing(ctx, in.Code, in.Name)
		return info, relayUpstream(err)
	}))
	m.HandleFunc("PUT /api/workspaces/{ws}/relay/automations-device", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in automationsBody) (relaylink.Status, error) {
		return ws.Relay.SetAutomationsDevice(ctx, in.DeviceID)
	}))
}

type pairingBody struct {
	Code string `json:"code"`
}

type joinBody struct {
	Code string `json:"code"`
	Name string `json:"name,omitempty"`
}

type automationsBody struct {
	DeviceID string `json:"device_id"`
}
