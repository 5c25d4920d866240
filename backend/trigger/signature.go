package trigger

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// Why a Standard Webhooks signature was refused.
var (
	ErrSignatureMissing  = errors.New("the webhook-id, webhook-timestamp and webhook-signature headers are required")
	ErrSignatureExpired  = errors.New("webhook-timestamp is too far from now: a replayed call, or the sender's clock is wrong")
	ErrSignatureMismatch = errors.New("no webhook-signature matches the body and the signing secret")
	ErrSecretInvalid     = errors.New(`the signing secret is not valid: "whsec_" must be followed by base64`)
)

// VerifySignature checks a call signed the Standard Webhooks way
// (https://www.standardwebhooks.com) with protocol.VerifyWebhook, the check
// the relay's delivery frames pass too: webhook-signature holds
// space-separated "v1,<base64 HMAC-SHA256>" of "<webhook-id>.<webhook-timestamp>.<body>",
// and webhook-timestamp (Unix seconds) must be within tolerance of now.
// secret is "whsec_<base64 key>", or any other text used as the key as is.
// Other signature versions (v1a) are ignored.
func VerifySignature(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	key, err := signingKey(secret)
	if err != nil {
		return err
	}
	err = protocol.VerifyWebhook(key, h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature"), body, now, tolerance)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, protocol.ErrUnsigned):
		return ErrSignatureMissing
	case errors.Is(err, protocol.ErrExpired):
		return ErrSignatureExpired
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
