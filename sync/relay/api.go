package relay

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

func (s *Server) routes() {
	ws := protocol.PathWorkspaces + "/{id}"
	s.mux.HandleFunc(protocol.PathHooks+"{token}", s.intake)
	s.mux.HandleFunc("POST "+protocol.PathWorkspaces, s.link)
	s.mux.HandleFunc("DELETE "+ws, s.authed(s.unlink))
	s.mux.HandleFunc("PUT "+ws+protocol.PathTokens, s.authed(s.setTokens))
	s.mux.HandleFunc("GET "+ws+protocol.PathConnect, s.authed(s.connect))
	s.mux.HandleFunc("GET "+ws+protocol.PathDeadLetters, s.authed(s.deadLetters))
	s.mux.HandleFunc("POST "+ws+protocol.PathDeadLetters+"/{delivery}/replay", s.authed(s.replay))
	s.mux.HandleFunc("DELETE "+ws+protocol.PathDeadLetters+"/{delivery}", s.authed(s.dropDeadLetter))
	s.mux.HandleFunc("POST "+ws+protocol.PathChanges, s.authed(s.pushChanges))
	s.mux.HandleFunc("GET "+ws+protocol.PathChanges, s.authed(s.pullChanges))
	s.mux.HandleFunc("GET "+protocol.PathHealth, s.health)
	s.mux.HandleFunc("GET "+protocol.PathMetrics, s.serveMetrics)
	s.phoneRoutes()
}

// bearer returns the token of an "Authorization: Bearer …" header.
func bearer(r *http.Request) string {
	v, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return strings.TrimSpace(v)
}

// authed checks the workspace secret of a /v1/workspaces/{id}/… call and
// hands the workspace to h.
func (s *Server) authed(h func(http.ResponseWriter, *http.Request, Workspace)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ws, err := s.store.Workspace(r.Context(), r.PathValue("id"))
		secret := bearer(r)
		switch {
		case err != nil && !errors.Is(err, ErrNotFound):
			s.log.Error("read workspace", "workspace", r.PathValue("id"), "err", err)
			writeError(w, http.StatusInternalServerError, "the relay could not read its store; try again")
		case err != nil || secret == "" ||
			subtle.ConstantTimeCompare([]byte(protocol.Verifier(secret)), []byte(ws.Verifier)) != 1:
			// The same answer for an unknown workspace and a wrong secret.
			writeError(w, http.StatusUnauthorized, "the workspace id or secret is wrong: link the workspace to this relay again (Settings → Relay)")
		default:
			h(w, r, ws)
		}
	}
}

// link answers POST /v1/workspaces: 201 with a protocol.Link.
func (s *Server) link(w http.ResponseWriter, r *http.Request) {
	if s.cfg.SignupToken == "" {
		writeError(w, http.StatusForbidden, "this relay links workspaces only through its operator (rerun-relay -new-workspace)")
		return
	}
	if subtle.ConstantTimeCompare([]byte(bearer(r)), []byte(s.cfg.SignupToken)) != 1 {
		writeError(w, http.StatusUnauthorized, "the signup token is wrong: ask the relay's operator for it")
		return
	}
	l, err := s.CreateWorkspace(r.Context())
	if err != nil {
		s.log.Error("link workspace", "err", err)
		writeError(w, http.StatusInternalServerError, "the workspace could not be linked; try again")
		return
	}
	writeJSON(w, http.StatusCreated, l)
}

// unlink answers DELETE /v1/workspaces/{id}: the relay forgets the
// workspace, its tokens and its deliveries.
func (s *Server) unlink(w http.ResponseWriter, r *http.Request, ws Workspace) {
	if err := s.store.DeleteWorkspace(r.Context(), ws.ID); err != nil && !errors.Is(err, ErrNotFound) {
		s.log.Error("unlink workspace", "workspace", ws.ID, "err", err)
		writeError(w, http.StatusInternalServerError, "the workspace could not be unlinked; try again")
		return
	}
	s.tokens.reset()
	s.hub.close(ws.ID)
	s.log.Info("workspace unlinked", "workspace", ws.ID)
	w.WriteHeader(http.StatusNoContent)
}

// setTokens answers PUT /v1/workspaces/{id}/tokens with protocol.Tokens.
func (s *Server) setTokens(w http.ResponseWriter, r *http.Request, ws Workspace) {
	var body protocol.Tokens
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 2<<20)).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, `the body must be {"hashes": [hex SHA-256 of each trigger token]}`)
		return
	}
	seen := map[string]bool{}
	var hashes []string
	for _, h := range body.Hashes {
		if !validHash(h) {
			writeError(w, http.StatusBadRequest, "each hash must be the hex SHA-256 of a token (64 lowercase hex digits); never send a token itself")
			return
		}
		if !seen[h] {
			seen[h] = true
			hashes = append(hashes, h)
		}
	}
	if len(hashes) > protocol.MaxTokens {
		writeError(w, http.StatusBadRequest, "a workspace registers at most "+strconv.Itoa(protocol.MaxTokens)+" tokens")
		return
	}
	err := s.store.SetTokens(r.Context(), ws.ID, hashes)
	s.tokens.reset() // even after an error: some may have changed
	switch {
	case errors.Is(err, ErrConflict):
		writeError(w, http.StatusConflict, err.Error())
	case err != nil:
		s.log.Error("set tokens", "workspace", ws.ID, "err", err)
		writeError(w, http.StatusInternalServerError, "the tokens could not be stored; try again")
	default:
		s.log.Info("tokens registered", "workspace", ws.ID, "count", len(hashes))
		w.WriteHeader(http.StatusNoContent)
	}
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for _, c := range h {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// deadLetters answers GET /v1/workspaces/{id}/dead-letters?limit=N (default
// 100, at most 1000), newest first.
func (s *Server) deadLetters(w http.ResponseWriter, r *http.Request, ws Workspace) {
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	if limit <= 0 {
		limit = 100
	}
	list, err := s.store.DeadLetters(r.Context(), ws.ID, min(limit, 1000))
	if err != nil {
		s.log.Error("list dead letters", "workspace", ws.ID, "err", err)
		writeError(w, http.StatusInternalServerError, "the dead letters could not be read; try again")
		return
	}
	writeJSON(w, http.StatusOK, list)
}

// replay answers POST …/dead-letters/{delivery}/replay: the delivery is due
// again now, with a new retention.
func (s *Server) replay(w http.ResponseWriter, r *http.Request, ws Workspace) {
	now := s.cfg.Now()
	err := s.store.Replay(r.Context(), ws.ID, r.PathValue("delivery"), now, now.Add(s.cfg.Retention))
	if err == nil {
		s.hub.poke(ws.ID)
	}
	s.deadLetterDone(w, r, ws, err)
}

func (s *Server) dropDeadLetter(w http.ResponseWriter, r *http.Request, ws Workspace) {
	s.deadLetterDone(w, r, ws, s.store.DropDeadLetter(r.Context(), ws.ID, r.PathValue("delivery")))
}

func (s *Server) deadLetterDone(w http.ResponseWriter, r *http.Request, ws Workspace, err error) {
	switch {
	case errors.Is(err, ErrNotFound):
		writeError(w, http.StatusNotFound, "no dead letter "+r.PathValue("delivery")+" in this workspace")
	case err != nil:
		s.log.Error("dead letter", "workspace", ws.ID, "delivery", r.PathValue("delivery"), "err", err)
		writeError(w, http.StatusInternalServerError, "the dead letter could not be changed; try again")
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if err := s.store.Ping(ctx); err != nil {
		http.Error(w, "store unreachable", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("ok\n"))
}

func writeJSON(w http.ResponseWriter, status int, v any) int {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
	return status
}

func writeError(w http.ResponseWriter, status int, msg string) int {
	return writeJSON(w, status, protocol.Error{Error: msg})
}
