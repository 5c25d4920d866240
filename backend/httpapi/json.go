package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/fault"
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

// decode reads one JSON object into v, refusing unknown fields and trailing
// data so a typo is an error instead of a silently ignored change.
func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fault.Invalid("request body has data after the JSON object; send exactly one object")
	}
	return nil
}

func decodeError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case isTooLarge(err), errors.Is(err, fault.ErrInvalid): // a type's own UnmarshalJSON said what to fix
		return err
	case errors.Is(err, io.EOF):
		return fault.Invalid("request body is empty; send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fault.Invalid("request body is not valid JSON: it ends in the middle of a value")
	case errors.As(err, &syn):
		return fault.Invalid("request body is not valid JSON (at byte %d): %v", syn.Offset, syn)
	case errors.As(err, &typ):
		if typ.Field != "" {
			return fault.Invalid("field %q must be a %s, not a JSON %s", typ.Field, jsonKind(typ.Type.String()), typ.Value)
		}
		return fault.Invalid("request body must be a JSON object, not a JSON %s", typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.TrimPrefix(err.Error(), "json: unknown field ")
		if field == `"handle"` {
			return fault.Invalid("the handle never changes after an agent is created; to use another handle, create a new agent")
		}
		return fault.Invalid("unknown field %s; check the field names", field)
	}
	return fault.Invalid("request body could not be read as JSON: %v", err)
}

func jsonKind(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "list"
	case strings.Contains(goType, "string"):
		return "string"
	case strings.Contains(goType, "int"), strings.Contains(goType, "float"):
		return "number"
	case strings.Contains(goType, "bool"):
		return "boolean"
	}
	return fmt.Sprintf("value of type %s", goType)
}
