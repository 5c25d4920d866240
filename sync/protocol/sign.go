package protocol

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Why a delivery frame was refused.
var (
	ErrUnsigned  = errors.New("the delivery frame has no id, timestamp or signature")
	ErrExpired   = errors.New("the delivery frame's timestamp is more than 5 minutes from this computer's clock: check the clock, or a frame was replayed")
	ErrSignature = errors.New("the delivery frame's signature does not match: the relay does not know this workspace's secret")
)

// TokenHash is how a trigger token is known to the relay and stored by the
// desktop: hex SHA-256.
func TokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Verifier is what the relay keeps to check a workspace secret presented as
// a Bearer token: hex SHA-256 (the secret has 256 random bits, so no slow
// hash is needed).
func Verifier(secret string) string { return TokenHash(secret) }

// SigningKey is the key the relay signs delivery frames with, derived from
// the workspace secret so that neither it nor the [Verifier] gives the
// other: a leaked relay database lets no one connect as the workspace.
func SigningKey(secret string) []byte {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("rerun-relay delivery signing v1"))
	return mac.Sum(nil)
}

// Sign returns the Standard Webhooks signature ("v1,<base64 HMAC-SHA256>")
// of "<id>.<timestamp>.<payload>".
func Sign(key []byte, id string, timestamp int64, payload []byte) string {
	return "v1," + base64.StdEncoding.EncodeToString(mac(key, id, strconv.FormatInt(timestamp, 10), payload))
}

// Verify checks a signature made by [Sign] and that timestamp (Unix
// seconds) is within tolerance of now. signature may hold several
// space-separated signatures (a rotating key); one matching is enough.
func Verify(key []byte, id string, timestamp int64, signature string, payload []byte, now time.Time, tolerance time.Duration) error {
	if timestamp <= 0 {
		return ErrUnsigned
	}
	return VerifyWebhook(key, id, strconv.FormatInt(timestamp, 10), signature, payload, now, tolerance)
}

// maxSignatures bounds the space-separated signatures examined: a sender
// rotating its key sends two or three.
const maxSignatures = 10

// VerifyWebhook is the Standard Webhooks check (https://www.standardwebhooks.com)
// of the webhook-id, webhook-timestamp and webhook-signature values: one of
// the space-separated "v1,<base64 HMAC-SHA256>" in signature is the MAC
// under key of "<id>.<timestamp>.<payload>", with timestamp as sent, and
// timestamp (decimal Unix seconds) is within tolerance of now. Other
// signature versions (v1a) are ignored. It is [Verify] for delivery frames
// and backend/trigger's check of a signed trigger call; the error is
// [ErrUnsigned], [ErrExpired] or [ErrSignature], which a caller checking
// other calls than frames says in its own words.
func VerifyWebhook(key []byte, id, timestamp, signature string, payload []byte, now time.Time, tolerance time.Duration) error {
	sec, err := strconv.ParseInt(timestamp, 10, 64)
	if id == "" || signature == "" || err != nil || sec < 0 {
		return ErrUnsigned
	}
	// Compare in seconds: a far-off timestamp would overflow a Duration.
	if d := now.Unix() - sec; d > int64(tolerance/time.Second) || -d > int64(tolerance/time.Second) {
		return ErrExpired
	}
	want := mac(key, id, timestamp, payload)
	for i, sig := range strings.Fields(signature) {
		if i == maxSignatures {
			break
		}
		version, value, ok := strings.Cut(sig, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(value)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrSignature
}

func mac(key []byte, id, timestamp string, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte("."))
	m.Write([]byte(timestamp))
	m.Write([]byte("."))
	m.Write(payload)
	return m.Sum(nil)
}
