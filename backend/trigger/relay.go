package trigger

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/store"
)

// RelayDeliveryHeader carries the relay's delivery id on a call the relay
// forwards (sync/client.HandlerDeliver sets it).
const RelayDeliveryHeader = "Rerun-Relay-Delivery"

// TokenHashes returns the hex SHA-256 of every token that opens a trigger
// now, rotated-out tokens in their grace period included: what the relay
// is told, so that it takes calls of these tokens' public URLs (the same
// hash as sync/protocol.TokenHash).
func (s *Service) TokenHashes(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT hash FROM trigger_tokens WHERE expires_at IS NULL OR expires_at > ? ORDER BY hash`,
		store.FormatTime(s.now()))
	if err != nil {
		return nil, fmt.Errorf("list trigger token hashes: %w", err)
	}
	defer rows.Close()
	hashes := []string{}
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, fmt.Errorf("list trigger token hashes: %w", err)
		}
		hashes = append(hashes, h)
	}
	return hashes, rows.Err()
}

// RelayHandler takes the calls the relay forwards, at /{hash} where hash
// is the hex SHA-256 of the trigger's token: the same intake as Handler
// (method, body limit, signature, idempotency, one commit with the run, 202
// only after it), found by hash. A call without webhook-id or
// Idempotency-Key is de-duplicated on its RelayDeliveryHeader, so the same
// delivery sent again starts no second run.
//
// It must only be called in process (sync/client.HandlerDeliver): on a
// listening port the hash, which the relay knows, would open the trigger.
// Handler hashes what it is given, so a hash presented there opens nothing.
func (s *Service) RelayHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.URL.Path
		if len(h) > 0 && h[0] == '/' {
			h = h[1:]
		}
		if r.Header.Get("webhook-id") == "" && r.Header.Get("Idempotency-Key") == "" {
			if id := r.Header.Get(RelayDeliveryHeader); id != "" {
				r.Header.Set("Idempotency-Key", id)
			}
		}
		s.intake(w, r, shownHash(h), func(ctx context.Context, now time.Time) (Trigger, bool, error) {
			if !isHexSHA256(h) {
				return Trigger{}, false, nil
			}
			t, ok, err := s.lookupHash(ctx, h, now)
			if err != nil {
				return Trigger{}, false, fmt.Errorf("look up trigger token hash %s: %w", shownHash(h), err)
			}
			return t, ok, nil
		})
	})
}

// shownHash is what logs print of a token hash.
func shownHash(h string) string { return "sha256:" + Shown(h) }

func isHexSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
