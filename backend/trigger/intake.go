package trigger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/store"
)

// maxKeyLen bounds an idempotency key (webhook ids are a few dozen
// characters).
const maxKeyLen = 200

// Handler serves POST (or any allowed method) /hooks/{token}. Mount it at
// PathPrefix on the local server, outside the UI token and Origin checks:
// services call it, and the token is their credential.
func (s *Service) Handler() http.Handler { return s.mux }

// answer is the body of a successful call.
type answer struct {
	RunID      string `json:"run_id"`
	DeliveryID string `json:"delivery_id"`
	Duplicate  bool   `json:"duplicate,omitempty"`
}

// Intake takes one call of a trigger's URL. It answers 202 once the run is
// durably queued; the package doc lists the other answers.
func (s *Service) Intake(w http.ResponseWriter, r *http.Request) {
	token := r.PathValue("token")
	if token == "" {
		token = path.Base(r.URL.Path)
	}
	s.intake(w, r, Shown(token), func(ctx context.Context, now time.Time) (Trigger, bool, error) {
		return s.lookup(ctx, token, now)
	})
}

// intake takes one call of the trigger find returns; shown is what logs
// may print of the credential the caller presented. Intake (a token) and
// the relay's in-process intake (a token's hash) share it.
func (s *Service) intake(w http.ResponseWriter, r *http.Request, shown string, find func(context.Context, time.Time) (Trigger, bool, error)) {
	ctx := r.Context()
	now := s.now()
	t, ok, err := find(ctx, now)
	if err != nil {
		s.log.Error("trigger call", "token", shown, "err", err)
		writeError(w, http.StatusInternalServerError, "the trigger could not be read; try again")
		return
	}
	if !ok {
		s.log.Debug("call to an unknown trigger token", "token", shown)
		writeError(w, http.StatusNotFound, "no trigger at this URL: the token is wrong, or it was rotated")
		return
	}
	d := Delivery{ID: store.NewSortedID("dlv"), TriggerID: t.ID, ReceivedAt: now, Method: r.Method,
		ContentType: cut(r.Header.Get("Content-Type"), maxHeaderText), Outcome: OutcomeRejected}
	// reject answers the caller and records why on the trigger; note is
	// for the person, msg for the caller.
	reject := func(status int, msg, note string) {
		d.Status, d.Outcome, d.Error = status, OutcomeRejected, note
		s.record(ctx, t, d)
		s.log.Info("trigger call refused", "trigger", t.ID, "token", t.TokenPrefix, "status", status, "reason", note)
		writeError(w, status, msg)
	}

	// The rate limit comes first: it also bounds the refusals written down.
	if ok, retry, note := s.limits.allow(t.ID, t.RateLimit, now); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(retry.Seconds()))))
		msg := fmt.Sprintf("over this trigger's limit of %d calls a minute; retry later", t.RateLimit)
		if note {
			reject(http.StatusTooManyRequests, msg, fmt.Sprintf("over the limit of %d calls a minute (further refusals this minute are not listed)", t.RateLimit))
		} else {
			writeError(w, http.StatusTooManyRequests, msg)
		}
		return
	}
	// open and signed refuse what this trigger does not take, answering
	// the caller; they run again when the trigger changed meanwhile.
	open := func(t Trigger) bool {
		if !t.Enabled {
			reject(http.StatusServiceUnavailable, "this trigger is paused", "the trigger is paused")
			return false
		}
		if !slices.Contains(t.Methods, r.Method) {
			w.Header().Set("Allow", strings.Join(t.Methods, ", "))
			reject(http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed; use "+strings.Join(t.Methods, " or "),
				"method "+r.Method+" is not allowed")
			return false
		}
		return true
	}
	signed := func(t Trigger, body []byte) bool {
		if t.SigningSecretVar != "" {
			if msg, note := s.verify(t, r.Header, body, now); msg != "" {
				reject(http.StatusUnauthorized, msg, note)
				return false
			}
		}
		return true
	}
	if !open(t) {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	d.Size = len(body)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		d.Size = int(tooLarge.Limit) + 1
		reject(http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is over %d KiB", s.cfg.MaxBody>>10),
			fmt.Sprintf("the body was over %d KiB", s.cfg.MaxBody>>10))
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, "the body could not be read")
		return
	}
	if !signed(t, body) {
		return
	}
	key := r.Header.Get("webhook-id")
	if key == "" {
		key = r.Header.Get("Idempotency-Key")
	}
	if len(key) > maxKeyLen {
		reject(http.StatusBadRequest, fmt.Sprintf("the idempotency key is over %d characters", maxKeyLen), "idempotency key too long")
		return
	}
	d.Status, d.Outcome = http.StatusAccepted, OutcomeAccepted
	c := call{method: r.Method, contentType: d.ContentType, query: r.URL.RawQuery, header: r.Header, body: body, receivedAt: now}
	out, dup, err := s.accept(ctx, t, d, key, c)
	if errors.Is(err, errStale) {
		// The trigger changed (paused, edited, deleted) after it was
		// looked up, and nothing was written: look again, once.
		s.found.clear()
		switch t, ok, err = find(ctx, now); {
		case err != nil:
			s.log.Error("trigger call", "token", shown, "err", err)
			writeError(w, http.StatusInternalServerError, "the trigger could not be read; try again")
			return
		case !ok:
			writeError(w, http.StatusNotFound, "no trigger at this URL: the token is wrong, or it was rotated")
			return
		case !open(t) || !signed(t, body):
			return
		}
		out, dup, err = s.accept(ctx, t, d, key, c)
	}
	d = out
	switch {
	case errors.Is(err, errStale):
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "the trigger is being changed; try again")
	case errors.Is(err, errBusy):
		w.Header().Set("Retry-After", "60")
		writeError(w, http.StatusConflict, err.Error())
	case err != nil:
		s.log.Error("trigger call", "trigger", t.ID, "token", t.TokenPrefix, "delivery", d.ID, "err", err)
		writeError(w, http.StatusInternalServerError, "the run could not be queued; try again")
	case dup:
		writeJSON(w, http.StatusOK, answer{RunID: d.RunID, DeliveryID: d.ID, Duplicate: true})
	default:
		s.log.Debug("trigger call accepted", "trigger", t.ID, "token", t.TokenPrefix, "delivery", d.ID, "run", d.RunID)
		writeJSON(w, http.StatusAccepted, answer{RunID: d.RunID, DeliveryID: d.ID})
	}
}

// verify checks a signed trigger's call. It returns "" when it passes, else
// what the caller is told and what the trigger's owner is told.
func (s *Service) verify(t Trigger, h http.Header, body []byte, now time.Time) (msg, note string) {
	var secret string
	ok := false
	if s.secrets != nil {
		secret, ok = s.secrets.Lookup(t.SigningSecretVar)
	}
	if !ok {
		return "the signature could not be verified", fmt.Sprintf("variable %s, the signing secret, is not set; add it in Variables", t.SigningSecretVar)
	}
	if err := VerifySignature(secret, h, body, now, s.cfg.SignatureTolerance); err != nil {
		if errors.Is(err, ErrSecretInvalid) {
			return "the signature could not be verified", fmt.Sprintf("variable %s: %v", t.SigningSecretVar, err)
		}
		return err.Error(), "signature refused: " + err.Error()
	}
	return "", ""
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, struct {
		Error string `json:"error"`
	}{msg})
}

// limiter holds a token bucket per trigger: a minute's worth of calls at
// once, refilled at the per-minute rate.
type limiter struct {
	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
	noted  time.Time // when a refusal was last written down
}

// allow takes a token for trigger id. When none is left it says how long
// until one is, and whether this refusal should be written down (the first
// in a minute).
func (l *limiter) allow(id string, perMinute int, now time.Time) (ok bool, retry time.Duration, note bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	capacity := float64(perMinute)
	b := l.buckets[id]
	if b == nil {
		b = &bucket{tokens: capacity, last: now}
		l.buckets[id] = b
	}
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = min(capacity, b.tokens+elapsed.Minutes()*capacity)
		b.last = now
	}
	b.tokens = min(b.tokens, capacity) // the limit may have been lowered
	if b.tokens >= 1 {
		b.tokens--
		return true, 0, false
	}
	retry = time.Duration((1 - b.tokens) / capacity * float64(time.Minute))
	if now.Sub(b.noted) >= time.Minute {
		b.noted, note = now, true
	}
	return false, retry, note
}
