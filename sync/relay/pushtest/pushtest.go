// Package pushtest is a Web Push service for tests, on httptest: it checks
// what a push service checks (RFC 8030 headers, the VAPID JWT of RFC 8292
// signed with the key it names, the audience, the expiry) and decrypts each
// message's aes128gcm body (RFC 8291, RFC 8188) with the private key of the
// subscription it made, as the phone's browser would.
package pushtest

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/internal/waittest"
	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// Message is one push the service took (or refused: Err).
type Message struct {
	Endpoint string
	Header   http.Header
	Claims   map[string]any // the VAPID JWT's
	VAPIDKey string         // the k= of the Authorization header
	Plain    []byte         // the decrypted payload
	Err      error          // why it was refused (400)
}

// Service is a push service on 127.0.0.1.
type Service struct {
	URL string
	srv *httptest.Server

	mu     sync.Mutex
	subs   map[string]*Subscriber
	answer map[string]int // by subscriber name: the status to answer instead of 201
	got    chan Message
}

// New starts a push service, closed when t ends.
func New(t testing.TB) *Service {
	s := &Service{subs: map[string]*Subscriber{}, answer: map[string]int{}, got: make(chan Message, 100)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Subscriber is one browser's subscription.
type Subscriber struct {
	Name         string
	Subscription protocol.Subscription
	key          *ecdh.PrivateKey
	auth         []byte
}

// Subscribe makes a subscription, as PushManager.subscribe would.
func (s *Service) Subscribe(name string) *Subscriber {
	key, _ := ecdh.P256().GenerateKey(rand.Reader)
	auth := make([]byte, 16)
	rand.Read(auth)
	sub := &Subscriber{Name: name, key: key, auth: auth}
	sub.Subscription.Endpoint = s.URL + "/push/" + name
	sub.Subscription.Keys.P256dh = base64.RawURLEncoding.EncodeToString(key.PublicKey().Bytes())
	sub.Subscription.Keys.Auth = base64.RawURLEncoding.EncodeToString(auth)
	s.mu.Lock()
	s.subs[name] = sub
	s.mu.Unlock()
	return sub
}

// Answer makes the service answer status to pushes for name from now on
// (0: 201 again).
func (s *Service) Answer(name string, status int) {
	s.mu.Lock()
	s.answer[name] = status
	s.mu.Unlock()
}

// Next returns the next push taken or refused, failing t after
// waittest.Patience.
func (s *Service) Next(t testing.TB) Message {
	t.Helper()
	select {
	case m := <-s.got:
		return m
	case <-time.After(waittest.Patience):
		t.Fatal("no push reached the push service")
		return Message{}
	}
}

// Pending says how many pushes wait to be read by Next.
func (s *Service) Pending() int { return len(s.got) }

func (s *Service) serve(w http.ResponseWriter, r *http.Request) {
	name, _ := strings.CutPrefix(r.URL.Path, "/push/")
	s.mu.Lock()
	sub, status := s.subs[name], s.answer[name]
	s.mu.Unlock()
	if sub == nil || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	if status != 0 {
		w.WriteHeader(status)
		return
	}
	m := Message{Endpoint: s.URL + r.URL.Path, Header: r.Header.Clone()}
	m.Err = s.check(r, sub, &m)
	s.got <- m
	if m.Err != nil {
		http.Error(w, m.Err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Location", s.URL+"/message/1")
	w.WriteHeader(http.StatusCreated)
}

func (s *Service) check(r *http.Request, sub *Subscriber, m *Message) error {
	if r.Header.Get("TTL") == "" {
		return errors.New("no TTL header (RFC 8030 §5.2)")
	}
	if ce := r.Header.Get("Content-Encoding"); ce != "aes128gcm" {
		return fmt.Errorf("Content-Encoding is %q, not aes128gcm (RFC 8291)", ce)
	}
	if err := s.checkVAPID(r.Header.Get("Authorization"), m); err != nil {
		return err
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 8192))
	if err != nil {
		return err
	}
	if len(body) > 4096 {
		return fmt.Errorf("the body has %d bytes, over the 4096 a push service must take", len(body))
	}
	m.Plain, err = sub.Decrypt(body)
	return err
}

// checkVAPID checks "vapid t=<JWT>, k=<key>" (RFC 8292 §3).
func (s *Service) checkVAPID(h string, m *Message) error {
	rest, ok := strings.CutPrefix(h, "vapid ")
	if !ok {
		return fmt.Errorf("Authorization %q is not vapid t=…, k=…", h)
	}
	var jwt string
	for part := range strings.SplitSeq(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			jwt = v
		case "k":
			m.VAPIDKey = v
		}
	}
	kb, err := base64.RawURLEncoding.DecodeString(m.VAPIDKey)
	if err != nil || len(kb) != 65 {
		return errors.New("k is not a base64url uncompressed P-256 key")
	}
	x, y := elliptic.Unmarshal(elliptic.P256(), kb) //nolint:staticcheck // the wire format is the uncompressed point
	if x == nil {
		return errors.New("k is not on P-256")
	}
	pub := &ecdsa.PublicKey{Curve: elliptic.P256(), X: x, Y: y}
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return errors.New("t is not a JWT")
	}
	var head map[string]any
	if err := decodeJSON(parts[0], &head); err != nil || head["alg"] != "ES256" {
		return fmt.Errorf("the JWT's header %v is not alg ES256", head)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return errors.New("the JWT's signature is not 64 bytes of ES256")
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return errors.New("the JWT's signature does not verify with k")
	}
	if err := decodeJSON(parts[1], &m.Claims); err != nil {
		return errors.New("the JWT's claims are not JSON")
	}
	if aud := m.Claims["aud"]; aud != s.URL {
		return fmt.Errorf("the JWT's aud is %v, not the push service's origin %s", aud, s.URL)
	}
	exp, _ := m.Claims["exp"].(float64)
	if left := time.Until(time.Unix(int64(exp), 0)); left <= 0 || left > 24*time.Hour {
		return fmt.Errorf("the JWT's exp is %v: it must be in the next 24 hours", exp)
	}
	if sub, _ := m.Claims["sub"].(string); !strings.HasPrefix(sub, "mailto:") && !strings.HasPrefix(sub, "https:") {
		return fmt.Errorf("the JWT's sub %q is not a mailto: or https: contact", sub)
	}
	return nil
}

func decodeJSON(part string, into any) error {
	b, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

// Decrypt opens an aes128gcm body (one record) sent to the subscriber.
func (sub *Subscriber) Decrypt(body []byte) ([]byte, error) {
	if len(body) < 21 {
		return nil, errors.New("the body is shorter than the aes128gcm header")
	}
	salt, rs, idlen := body[:16], binary.BigEndian.Uint32(body[16:20]), int(body[20])
	if idlen != 65 || len(body) < 21+idlen+16 {
		return nil, fmt.Errorf("the key id has %d bytes, not the 65 of the sender's public key", idlen)
	}
	asPublic, ct := body[21:21+idlen], body[21+idlen:]
	if uint32(len(ct)) > rs {
		return nil, fmt.Errorf("the record (%d bytes) is over the record size %d: more than one record", len(ct), rs)
	}
	as, err := ecdh.P256().NewPublicKey(asPublic)
	if err != nil {
		return nil, fmt.Errorf("the key id is not a P-256 key: %w", err)
	}
	secret, err := sub.key.ECDH(as)
	if err != nil {
		return nil, err
	}
	prkKey, _ := hkdf.Extract(sha256.New, secret, sub.auth)
	info := append(append([]byte("WebPush: info\x00"), sub.key.PublicKey().Bytes()...), asPublic...)
	ikm, _ := hkdf.Expand(sha256.New, prkKey, string(info), 32)
	prk, _ := hkdf.Extract(sha256.New, ikm, salt)
	cek, _ := hkdf.Expand(sha256.New, prk, "Content-Encoding: aes128gcm\x00", 16)
	nonce, _ := hkdf.Expand(sha256.New, prk, "Content-Encoding: nonce\x00", 12)
	b, _ := aes.NewCipher(cek)
	gcm, _ := cipher.NewGCM(b)
	plain, err := gcm.Open(nil, nonce, ct, nil)
	if err != nil {
		return nil, fmt.Errorf("the body does not decrypt with the subscription's key: %w", err)
	}
	plain = bytes.TrimRight(plain, "\x00")
	if len(plain) == 0 || plain[len(plain)-1] != 2 {
		return nil, errors.New("the last record does not end with the 0x02 delimiter")
	}
	return plain[:len(plain)-1], nil
}
