package trigger

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Why a Standard Webhooks signature was refused.
var (
	ErrSignatureMissing  = errors.New("the webhook-id, webhook-timestamp and webhook-signature headers are required")
	ErrSignatureExpired  = errors.New("webhook-timestamp is too far from now: a replayed call, or the sender's clock is wrong")
	ErrSignatureMismatch = errors.New("no webhook-signature matches the body and the signing secret")
	ErrSecretInvalid     = errors.New(`the signing secret is not valid: "whsec_" must be followed by base64`)
)

// maxSignatures bounds the space-separated signatures examined: a sender
// rotating its secret sends two or three.
const maxSignatures = 10

// VerifySignature checks a call signed the Standard Webhooks way
// (https://www.standardwebhooks.com): webhook-signature holds
// space-separated "v1,<base64 HMAC-SHA256>" of "<webhook-id>.<webhook-timestamp>.<body>",
// and webhook-timestamp (Unix seconds) must be within tolerance of now.
// secret is "whsec_<base64 key>", or any other text used as the key as is.
// Other signature versions (v1a) are ignored.
func VerifySignature(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	key, err := signingKey(secret)
	if err != nil {
		return err
	}
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return ErrSignatureMissing
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sec < 0 {
		return ErrSignatureMissing
	}
	// Compare in seconds: a far-off timestamp would overflow a Duration.
	if d := now.Unix() - sec; d > int64(tolerance/time.Second) || -d > int64(tolerance/time.Second) {
		return ErrSignatureExpired
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte("."))
	mac.Write([]byte(ts))
	mac.Write([]byte("."))
	mac.Write(body)
	want := mac.Sum(nil)
	for i, sig := range strings.Fields(sigs) {
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
	return ErrSignatureMismatch
}

// signingKey reads a secret: "whsec_" + base64, or raw text.
func signingKey(secret string) ([]byte, error) {
	rest, ok := strings.CutPrefix(secret, "whsec_")
	if !ok {
		if secret == "" {
			return nil, ErrSecretInvalid
		}
		return []byte(secret), nil
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(key) == 0 {
		return nil, ErrSecretInvalid
	}
	return key, nil
}
