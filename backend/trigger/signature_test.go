package trigger_test

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/rerun-build/rerun-desktop/backend/trigger"
)

func TestVerifySignatureRawSecret(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"a":1}`)
	wh, _ := standardwebhooks.NewWebhookRaw([]byte("plain text secret"))
	sig, _ := wh.Sign("msg_1", now, body)
	h := http.Header{"Webhook-Id": {"msg_1"}, "Webhook-Timestamp": {strconv.FormatInt(now.Unix(), 10)}, "Webhook-Signature": {sig}}
	if err := trigger.VerifySignature("plain text secret", h, body, now, 5*time.Minute); err != nil {
		t.Errorf("raw secret: %v, want accepted", err)
	}
	if err := trigger.VerifySignature("whsec_not*base64", h, body, now, 5*time.Minute); !errors.Is(err, trigger.ErrSecretInvalid) {
		t.Errorf("bad whsec_ secret: %v, want ErrSecretInvalid", err)
	}
}

// FuzzVerifySignature: never a panic; an accepted call always carries the
// right v1 signature and a timestamp within the window; and what the
// reference library signs is always accepted.
func FuzzVerifySignature(f *testing.F) {
	f.Add("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_1", "1800000000", "v1,abc", []byte(`{}`))
	f.Add("raw", "", "", "", []byte(nil))
	f.Add("whsec_", "id", "-1", "v1, v1,,, v2,x", []byte("x"))
	f.Add("whsec_====", "id", "99999999999999999999", "v1,"+strings.Repeat("A", 44), []byte{0, 1})
	f.Add("s", "id", "-9223372036854775808", "v1a,xx v1,yy", []byte("body"))
	now := time.Unix(1_800_000_000, 0)
	const tolerance = 5 * time.Minute
	f.Fuzz(func(t *testing.T, secret, id, ts, sigs string, body []byte) {
		h := http.Header{}
		h.Set("webhook-id", id)
		h.Set("webhook-timestamp", ts)
		h.Set("webhook-signature", sigs)
		key, keyOK := []byte(secret), secret != ""
		if rest, ok := strings.CutPrefix(secret, "whsec_"); ok {
			var err error
			key, err = base64.StdEncoding.DecodeString(rest)
			keyOK = err == nil && len(key) > 0
		}
		if err := trigger.VerifySignature(secret, h, body, now, tolerance); err == nil {
			sec, perr := strconv.ParseInt(ts, 10, 64)
			if !keyOK || perr != nil || sec < now.Unix()-300 || sec > now.Unix()+300 {
				t.Fatalf("accepted with secret %q timestamp %q", secret, ts)
			}
			wh, _ := standardwebhooks.NewWebhookRaw(key)
			want, _ := wh.Sign(id, time.Unix(sec, 0), body)
			if !strings.Contains(" "+sigs+" ", " "+want+" ") {
				t.Fatalf("accepted signatures %q, none is %q", sigs, want)
			}
		}
		if !keyOK || id == "" {
			return
		}
		wh, _ := standardwebhooks.NewWebhookRaw(key)
		sig, _ := wh.Sign(id, now, body)
		h.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
		h.Set("webhook-signature", sig)
		if err := trigger.VerifySignature(secret, h, body, now, tolerance); err != nil {
			t.Fatalf("the reference library's signature was refused: %v", err)
		}
	})
}
