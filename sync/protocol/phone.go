package protocol

// # Phones
//
// A workspace's phones reach it through the relay: the relay serves a small
// installable web app at /p/, sends Web Push notifications (RFC 8030, 8291,
// 8292: VAPID, aes128gcm) to the phones the desktop paired, and queues the
// phones' answers to cards as deliveries of the workspace, like webhook
// calls, until the desktop acks them.
//
// Pairing. The desktop makes a one-time pairing token (rpt_…), registers
// its hash and expiry with POST /v1/workspaces/{id}/phone/pairings, and
// shows the person a link (a QR code): <relay>/p/#<fragment>. The fragment,
// never sent to the relay, carries the workspace's relay id, the token and
// the phone key ([PhoneKey], derived from the sync key). The phone POSTs
// the token and its push subscription to /v1/phone/pair; the relay spends
// the token (once, before it expires) and answers the phone's own secret
// (rrp_<phone id>.<random>), which authenticates its later calls.
//
// Cards and answers are sealed with the phone key ([SealPhone]): the relay
// forwards ciphertext only. A card reaches the phone as the payload of a
// Web Push message (POST /v1/workspaces/{id}/phone/push, the desktop's
// outbox); an answer travels back as a delivery whose token hash is
// [PhoneAnswerHash] and whose header X-Rerun-Phone names the phone the
// relay authenticated.

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// Paths of the phone API. Under /v1/workspaces/{id} (the desktop, with the
// workspace secret): PathPhone + "/pairings" (POST), "/devices" (GET),
// "/devices/{phone}" (DELETE), "/push" (POST). From the phone:
// PathPhoneAPI + "/vapid" (GET), "/pair" (POST), "/subscription" (PUT),
// "/answers" (POST). PathPhoneApp serves the web app.
const (
	PathPhone    = "/phone"
	PathPhoneAPI = "/v1/phone"
	PathPhoneApp = "/p/"
)

// Phone limits.
const (
	// PairingTTL is the longest a pairing token lives (the desktop asks
	// for less: 10 minutes).
	PairingTTL = time.Hour
	// MaxPhones bounds the phones of one workspace.
	MaxPhones = 20
	// MaxPhoneName bounds a phone's name.
	MaxPhoneName = 80
	// MaxPushPayload bounds a sealed card: a Web Push message carries at
	// most 4096 bytes, of which the aes128gcm header, padding delimiter
	// and tag take 103.
	MaxPushPayload = 3900
	// MaxAnswer bounds a sealed answer.
	MaxAnswer = 64 << 10
	// MaxEndpoint bounds a push subscription's endpoint URL.
	MaxEndpoint = 2048
)

// PhoneAnswerHash is the token hash of the deliveries that carry phones'
// answers: not the hash of any token (not hex), so no webhook reaches it.
const PhoneAnswerHash = "phone-answer"

// HeaderPhone names, on an answer's delivery, the phone the relay
// authenticated.
const HeaderPhone = "X-Rerun-Phone"

// PhonePairing is the body of POST /v1/workspaces/{id}/phone/pairings.
type PhonePairing struct {
	Hash      string    `json:"hash"` // TokenHash of the pairing token
	ExpiresAt time.Time `json:"expires_at"`
}

// Subscription is a browser's PushSubscription (its toJSON()).
type Subscription struct {
	Endpoint string `json:"endpoint"`
	Keys     struct {
		P256dh string `json:"p256dh"` // base64url, the uncompressed P-256 point
		Auth   string `json:"auth"`   // base64url, 16 bytes
	} `json:"keys"`
}

// PairPhone is the body of POST /v1/phone/pair.
type PairPhone struct {
	WorkspaceID  string       `json:"workspace_id"`
	Token        string       `json:"token"` // the pairing token, rpt_…
	Name         string       `json:"name"`
	Subscription Subscription `json:"subscription"`
}

// PhonePaired answers a pairing: the phone's id and secret, shown once.
type PhonePaired struct {
	PhoneID string `json:"phone_id"`
	Secret  string `json:"secret"`
}

// Phone is a paired phone as GET …/phone/devices lists it.
type Phone struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	PairedAt   time.Time  `json:"paired_at"`
	LastPushAt *time.Time `json:"last_push_at,omitempty"`
	LastError  string     `json:"last_error,omitempty"` // the push service's last refusal
}

// PhonePush is the body of POST /v1/workspaces/{id}/phone/push: one sealed
// card for every phone of the workspace.
type PhonePush struct {
	ID   string `json:"id"`   // the desktop's send id: the same on a retry
	Tag  string `json:"tag"`  // collapses a retry on the phone (the notification id)
	Body []byte `json:"body"` // sealed with the phone key, ≤ MaxPushPayload
}

// PhonePushed answers a push: how many phones' push services took it, and
// the phones whose subscription is gone (the relay forgot them).
type PhonePushed struct {
	Sent   int      `json:"sent"`
	Gone   []string `json:"gone,omitempty"`
	Failed []string `json:"failed,omitempty"` // phones whose push service failed (the relay answered 502)
}

// PhoneAnswer is the body of POST /v1/phone/answers.
type PhoneAnswer struct {
	Body []byte `json:"body"` // sealed with the phone key, ≤ MaxAnswer
}

// VAPID answers GET /v1/phone/vapid: the relay's application server key,
// for PushManager.subscribe.
type VAPID struct {
	PublicKey string `json:"public_key"` // base64url, uncompressed P-256 point
}

// ErrPhone: a phone call the relay refuses.
var ErrPhone = errors.New("invalid phone request")

// CheckSubscription says what is wrong with a push subscription: the
// endpoint must be https (http only on this computer, for tests), p256dh
// a P-256 point, auth 16 bytes.
func CheckSubscription(s Subscription) error {
	if len(s.Endpoint) > MaxEndpoint {
		return fmt.Errorf("%w: the push endpoint is over %d characters", ErrPhone, MaxEndpoint)
	}
	u, err := url.Parse(s.Endpoint)
	if err != nil || u.Host == "" || u.User != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("%w: the push endpoint %.80q is not an https URL", ErrPhone, s.Endpoint)
	}
	if u.Scheme == "http" {
		if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
			return fmt.Errorf("%w: the push endpoint must use https", ErrPhone)
		}
	}
	pub, err := decodeB64URL(s.Keys.P256dh)
	if err != nil {
		return fmt.Errorf("%w: keys.p256dh is not base64url", ErrPhone)
	}
	if _, err := ecdh.P256().NewPublicKey(pub); err != nil || len(pub) != 65 {
		return fmt.Errorf("%w: keys.p256dh is not an uncompressed P-256 public key", ErrPhone)
	}
	auth, err := decodeB64URL(s.Keys.Auth)
	if err != nil || len(auth) != 16 {
		return fmt.Errorf("%w: keys.auth must be 16 bytes in base64url", ErrPhone)
	}
	return nil
}

// decodeB64URL reads base64url with or without padding.
func decodeB64URL(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

// CheckPhoneName trims a phone's name and says what is wrong with it.
func CheckPhoneName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		name = "Phone"
	}
	if len([]rune(name)) > MaxPhoneName {
		return "", fmt.Errorf("%w: the phone's name is over %d characters", ErrPhone, MaxPhoneName)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return "", fmt.Errorf("%w: the phone's name has a control character", ErrPhone)
		}
	}
	return name, nil
}

// NewPhoneSecret returns a phone's secret for id: rrp_<id>.<random>.
func NewPhoneSecret(id string) string {
	b := make([]byte, 24)
	rand.Read(b)
	return "rrp_" + id + "." + base64.RawURLEncoding.EncodeToString(b)
}

// ParsePhoneSecret returns the phone id a phone's secret names.
func ParsePhoneSecret(secret string) (id string, err error) {
	rest, ok := strings.CutPrefix(secret, "rrp_")
	id, random, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || !validPhoneID(id) || len(random) < 16 || len(random) > 64 {
		return "", fmt.Errorf("%w: not a phone secret; pair the phone again", ErrPhone)
	}
	return id, nil
}

// validPhoneID says whether id is a phone id: "ph_" and 1 to 40 lowercase
// letters or digits.
func validPhoneID(id string) bool {
	rest, ok := strings.CutPrefix(id, "ph_")
	if !ok || rest == "" || len(rest) > 40 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; (c < '0' || c > '9') && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}

// ValidPhoneID says whether id is a phone id.
func ValidPhoneID(id string) bool { return validPhoneID(id) }

// PhoneKey derives the key phones seal with from the workspace's 32-byte
// sync key: a phone holds it, never the sync key, so a lost phone opens
// neither the change log nor the variables.
func PhoneKey(syncKey []byte) []byte {
	k, err := hkdf.Key(sha256.New, syncKey, nil, "rerun phone key v1", 32)
	if err != nil {
		panic(err) // 32 bytes of SHA-256 never fail
	}
	return k
}

// What a sealed phone record is: its kind is bound into the seal, so a
// card cannot be replayed as an answer.
const (
	SealCard   = "card"
	SealAnswer = "answer"
)

// sealVersion starts every sealed phone record.
const sealVersion = 1

// SealPhone seals plaintext as a record of kind with the phone key:
// version byte 1, a 12-byte nonce, AES-256-GCM with the additional data
// "rerun phone v1 <kind>". WebCrypto opens it in the phone's browser.
func SealPhone(key []byte, kind string, plaintext []byte) ([]byte, error) {
	aead, err := phoneAEAD(key)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 1+12, 1+12+len(plaintext)+16)
	out[0] = sealVersion
	rand.Read(out[1:13])
	return aead.Seal(out, out[1:13], plaintext, []byte("rerun phone v1 "+kind)), nil
}

// OpenPhone opens a record SealPhone sealed as kind.
func OpenPhone(key []byte, kind string, sealed []byte) ([]byte, error) {
	aead, err := phoneAEAD(key)
	if err != nil {
		return nil, err
	}
	if len(sealed) < 1+12+16 || sealed[0] != sealVersion {
		return nil, fmt.Errorf("%w: not a sealed phone record", ErrPhone)
	}
	plain, err := aead.Open(nil, sealed[1:13], sealed[13:], []byte("rerun phone v1 "+kind))
	if err != nil {
		return nil, fmt.Errorf("%w: the record does not open with this workspace's phone key", ErrPhone)
	}
	return plain, nil
}

func phoneAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("%w: a phone key has 32 bytes", ErrPhone)
	}
	b, _ := aes.NewCipher(key)
	return cipher.NewGCM(b)
}
