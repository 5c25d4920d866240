package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
	"github.com/rerun-build/rerun-desktop/backend/secret"
)

type errorBody struct {
	Error string `json:"error"`
	// Code says what the app can do about it: credential_like (the text
	// looks like a credential; after the person confirmed it is none, send
	// again with ?allow_credential_like=true).
	Code string `json:"code,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody{Error: msg})
}

// fail translates a service error into a status once, here at the edge.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	switch {
	case errors.Is(err, fault.ErrNotFound):
		status = http.StatusNotFound
	case errors.Is(err, fault.ErrConflict):
		status = http.StatusConflict
	case errors.Is(err, fault.ErrInvalid):
		status = http.StatusBadRequest
	case isTooLarge(err):
		writeError(w, http.StatusRequestEntityTooLarge, tooLarge(r))
		return
	case errors.As(err, new(upstreamError)):
		status = http.StatusBadGateway // an app's server failed (apps.go)
	}
	if status == http.StatusInternalServerError {
		s.log.Error("request failed", "method", r.Method, "path", logPath(r), "err", err)
	}
	body := errorBody{Error: fault.Message(err)}
	if errors.Is(err, secret.ErrCredentialLike) {
		body.Code = "credential_like"
	}
	writeJSON(w, status, body)
}

// decode reads the request body, one JSON object, into v (jsonarg.Read).
func decode(r *http.Request, v any) error {
	return handleHint(jsonarg.Read(r.Body, v))
}

// handleHint says why "handle" is refused: it is no field of any update.
func handleHint(err error) error {
	if field, ok := jsonarg.UnknownField(err); ok && field == "handle" {
		return fault.Invalid("the handle never changes after an agent is created; to use another handle, create a new agent")
	}
	return err
}
