package relay

// Phones (see "Phones" in package protocol): pairing with a one-time token,
// Web Push of sealed cards to each paired phone, and phones' sealed answers
// queued as deliveries of the workspace. The relay opens none of them.

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

func (s *Server) phoneRoutes() {
	ws := protocol.PathWorkspaces + "/{id}" + protocol.PathPhone
	s.mux.HandleFunc("POST "+ws+"/pairings", s.authed(s.addPairing))
	s.mux.HandleFunc("GET "+ws+"/devices", s.authed(s.listPhones))
	s.mux.HandleFunc("DELETE "+ws+"/devices/{phone}", s.authed(s.removePhone))
	s.mux.HandleFunc("POST "+ws+"/push", s.authed(s.pushPhones))
	s.mux.HandleFunc("GET "+protocol.PathPhoneAPI+"/vapid", s.vapidKey)
	s.mux.HandleFunc("POST "+protocol.PathPhoneAPI+"/pair", s.pairPhone)
	s.mux.HandleFunc("PUT "+protocol.PathPhoneAPI+"/subscription", s.phoneAuthed(s.resubscribe))
	s.mux.HandleFunc("POST "+protocol.PathPhoneAPI+"/answers", s.phoneAuthed(s.phoneAnswer))
	s.mux.Handle("GET "+protocol.PathPhoneApp, phoneApp())
}

// decodeBody reads a JSON body of at most limit bytes into v.
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	return json.NewDecoder(http.MaxBytesReader(w, r.Body, limit)).Decode(v)
}

// addPairing answers POST …/phone/pairings with protocol.PhonePairing: 204.
func (s *Server) addPairing(w http.ResponseWriter, r *http.Request, ws Workspace) {
	var p protocol.PhonePairing
	if err := decodeBody(w, r, 4<<10, &p); err != nil {
		writeError(w, http.StatusBadRequest, `the body must be {"hash": hex SHA-256 of the pairing token, "expires_at": RFC 3339 time}`)
		return
	}
	now := s.cfg.Now()
	switch {
	case !validHash(p.Hash):
		writeError(w, http.StatusBadRequest, "hash must be the hex SHA-256 of the pairing token (64 lowercase hex digits); never send the token")
		return
	case !p.ExpiresAt.After(now) || p.ExpiresAt.After(now.Add(protocol.PairingTTL)):
		writeError(w, http.StatusBadRequest, "expires_at must be in the future and at most an hour away")
		return
	}
	if err := s.store.AddPairing(r.Context(), ws.ID, p.Hash, p.ExpiresAt, now); err != nil {
		s.log.Error("keep phone pairing", "workspace", ws.ID, "err", err)
		writeError(w, http.StatusInternalServerError, "the pairing could not be kept; try again")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) listPhones(w http.ResponseWriter, r *http.Request, ws Workspace) {
	list, err := s.store.Phones(r.Context(), ws.ID)
	if err != nil {
		s.log.Error("list phones", "workspace", ws.ID, "err", err)
		writeError(w, http.StatusInternalServerError, "the phones could not be read; try again")
		return
	}
	out := make([]protocol.Phone, len(list))
	for i, p := range list {
		out[i] = p.Info()
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) removePhone(w http.ResponseWriter, r *http.Request, ws Workspace) {
	err := s.store.DeletePhone(r.Context(), ws.ID, r.PathValue("phone"))
	switch {
	case errors.Is(err, ErrNotFound):
		writeError(w, http.StatusNotFound, "no phone "+r.PathValue("phone")+" is paired with this workspace")
	case err != nil:
		s.log.Error("remove phone", "workspace", ws.ID, "err", err)
		writeError(w, http.StatusInternalServerError, "the phone could not be removed; try again")
	default:
		s.log.Info("phone removed", "workspace", ws.ID, "phone", r.PathValue("phone"))
		w.WriteHeader(http.StatusNoContent)
	}
}

// pushPhones answers POST …/phone/push: the sealed card goes to every
// paired phone's push service. 200 when each took it (or none is paired);
// 502 when one failed (the desktop retries: the phone collapses the copy
// by its tag). A phone whose subscription is gone (404, 410) is forgotten.
func (s *Server) pushPhones(w http.ResponseWriter, r *http.Request, ws Workspace) {
	var p protocol.PhonePush
	if err := decodeBody(w, r, 2*protocol.MaxPushPayload+1024, &p); err != nil {
		writeError(w, http.StatusBadRequest, `the body must be {"id", "tag", "body": the sealed card in base64}, at most 3900 sealed bytes`)
		return
	}
	if p.ID == "" || len(p.ID) > 100 || len(p.Tag) > 100 || len(p.Body) == 0 || len(p.Body) > protocol.MaxPushPayload {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("id (≤ 100 characters) and body (1..%d sealed bytes) are required", protocol.MaxPushPayload))
		return
	}
	phones, err := s.store.Phones(r.Context(), ws.ID)
	if err != nil {
		s.log.Error("list phones", "workspace", ws.ID, "err", err)
		writeError(w, http.StatusInternalServerError, "the phones could not be read; try again")
		return
	}
	out := protocol.PhonePushed{}
	for _, ph := range phones {
		gone, err := s.webPush(r.Context(), ph, p)
		now := s.cfg.Now()
		switch {
		case gone:
			out.Gone = append(out.Gone, ph.ID)
			if err := s.store.DeletePhone(r.Context(), ws.ID, ph.ID); err != nil && !errors.Is(err, ErrNotFound) {
				s.log.Error("forget phone", "workspace", ws.ID, "phone", ph.ID, "err", err)
			}
			s.log.Info("phone's push subscription is gone; phone forgotten", "workspace", ws.ID, "phone", ph.ID)
		case err != nil:
			out.Failed = append(out.Failed, ph.ID)
			s.log.Warn("web push", "workspace", ws.ID, "phone", ph.ID, "err", err)
			s.store.PushDone(r.Context(), ph.ID, now, cutString(err.Error(), 300))
		default:
			out.Sent++
			s.store.PushDone(r.Context(), ph.ID, now, "")
		}
	}
	s.metrics.pushes.Add(int64(out.Sent))
	status := http.StatusOK
	if len(out.Failed) > 0 {
		status = http.StatusBadGateway
	}
	writeJSON(w, status, out)
}

// DefaultPushHosts are the push services of the browsers phones run:
// Chrome and the browsers built on it (FCM), Firefox (Mozilla's autopush),
// Safari (Apple's) and Edge (Windows Push Notification Services).
var DefaultPushHosts = []string{
	"fcm.googleapis.com",
	"updates.push.services.mozilla.com",
	".push.apple.com",
	".notify.windows.com",
}

// pushHostAllowed says whether endpoint names one of the relay's push hosts.
func (s *Server) pushHostAllowed(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	host := strings.ToLower(u.Hostname())
	for _, h := range s.cfg.PushHosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if h != "" && (host == h || strings.HasPrefix(h, ".") && strings.HasSuffix(host, h)) {
			return true
		}
	}
	return false
}

// checkSubscription is protocol.CheckSubscription and the push host check.
func (s *Server) checkSubscription(sub protocol.Subscription) error {
	if err := protocol.CheckSubscription(sub); err != nil {
		return err
	}
	if !s.pushHostAllowed(sub.Endpoint) {
		u, _ := url.Parse(sub.Endpoint)
		return fmt.Errorf("%w: %.80s is not a push service this relay sends to (its operator lists them with -push-hosts)", protocol.ErrPhone, u.Hostname())
	}
	return nil
}

// webPush sends p to phone ph: gone says its subscription no longer exists.
func (s *Server) webPush(ctx context.Context, ph PhoneRecord, p protocol.PhonePush) (gone bool, err error) {
	// Checked again here: the list may have shrunk since the phone paired.
	if !s.pushHostAllowed(ph.Subscription.Endpoint) {
		return false, errors.New("the phone's push service is not one this relay sends to (-push-hosts): pair the phone again")
	}
	priv, pub, err := s.vapid(ctx)
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	topic := sha256.Sum256([]byte(p.Tag))
	resp, err := webpush.SendNotificationWithContext(ctx, p.Body, &webpush.Subscription{
		Endpoint: ph.Subscription.Endpoint,
		Keys:     webpush.Keys{P256dh: ph.Subscription.Keys.P256dh, Auth: ph.Subscription.Keys.Auth},
	}, &webpush.Options{
		HTTPClient: s.cfg.PushClient, Subscriber: s.cfg.VAPIDSubject,
		VAPIDPublicKey: pub, VAPIDPrivateKey: priv,
		TTL: int(protocol.Retention / time.Second), Urgency: webpush.UrgencyHigh,
		Topic: base64.RawURLEncoding.EncodeToString(topic[:24]),
	})
	if err != nil {
		return false, fmt.Errorf("push service unreachable: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	switch {
	case resp.StatusCode/100 == 2:
		return false, nil
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return true, nil
	}
	return false, fmt.Errorf("push service answered %s: %s", resp.Status, strings.TrimSpace(string(msg)))
}

// vapid returns the relay's VAPID key pair (base64url), made once and
// kept in the store.
func (s *Server) vapid(ctx context.Context) (priv, pub string, err error) {
	s.vapidMu.Lock()
	defer s.vapidMu.Unlock()
	if s.vapidPub != "" {
		return s.vapidPriv, s.vapidPub, nil
	}
	v, err := s.store.RelayKey(ctx, "vapid", func() (string, error) {
		priv, pub, err := webpush.GenerateVAPIDKeys()
		return priv + "." + pub, err
	})
	if err != nil {
		return "", "", err
	}
	priv, pub, ok := strings.Cut(v, ".")
	if !ok {
		return "", "", errors.New("the relay's VAPID key is damaged")
	}
	s.vapidPriv, s.vapidPub = priv, pub
	return priv, pub, nil
}

type vapidKeys struct {
	vapidMu             sync.Mutex
	vapidPriv, vapidPub string
}

func (s *Server) vapidKey(w http.ResponseWriter, r *http.Request) {
	_, pub, err := s.vapid(r.Context())
	if err != nil {
		s.log.Error("vapid key", "err", err)
		writeError(w, http.StatusInternalServerError, "the relay's push key could not be read; try again")
		return
	}
	writeJSON(w, http.StatusOK, protocol.VAPID{PublicKey: pub})
}

// pairPhone answers POST /v1/phone/pair: 201 protocol.PhonePaired; 404 an
// unknown token; 410 one that expired or was used; 409 too many phones.
func (s *Server) pairPhone(w http.ResponseWriter, r *http.Request) {
	var p protocol.PairPhone
	if err := decodeBody(w, r, 16<<10, &p); err != nil {
		writeError(w, http.StatusBadRequest, `the body must be {"workspace_id", "token", "name", "subscription": PushSubscription.toJSON()}`)
		return
	}
	name, err := protocol.CheckPhoneName(p.Name)
	if err == nil {
		err = s.checkSubscription(p.Subscription)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if !strings.HasPrefix(p.Token, "rpt_") || len(p.Token) > maxToken || p.WorkspaceID == "" || len(p.WorkspaceID) > 100 {
		writeError(w, http.StatusNotFound, "this pairing link is not one the desktop made: make a new one (Settings → Phone)")
		return
	}
	id := "ph_" + random(10)
	secret := protocol.NewPhoneSecret(id)
	rec := PhoneRecord{ID: id, WorkspaceID: p.WorkspaceID, Verifier: protocol.Verifier(secret), Name: name,
		Subscription: p.Subscription, PairedAt: s.cfg.Now()}
	err = s.store.Pair(r.Context(), protocol.TokenHash(p.Token), rec)
	switch {
	case errors.Is(err, ErrNotFound):
		writeError(w, http.StatusNotFound, "this pairing link is not one the desktop made: make a new one (Settings → Phone)")
	case errors.Is(err, ErrExpired):
		writeError(w, http.StatusGone, "this pairing link expired: make a new one on the desktop (Settings → Phone)")
	case errors.Is(err, ErrUsed):
		writeError(w, http.StatusGone, "this pairing link was already used: a link pairs one phone; make a new one (Settings → Phone)")
	case errors.Is(err, ErrConflict):
		writeError(w, http.StatusConflict, fmt.Sprintf("this workspace already has %d phones: remove one on the desktop first", protocol.MaxPhones))
	case err != nil:
		s.log.Error("pair phone", "workspace", p.WorkspaceID, "err", err)
		writeError(w, http.StatusInternalServerError, "the phone could not be paired; try again")
	default:
		s.log.Info("phone paired", "workspace", p.WorkspaceID, "phone", id)
		writeJSON(w, http.StatusCreated, protocol.PhonePaired{PhoneID: id, Secret: secret})
	}
}

// phoneAuthed checks a phone's secret and hands its record to h.
func (s *Server) phoneAuthed(h func(http.ResponseWriter, *http.Request, PhoneRecord)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		secret := bearer(r)
		id, err := protocol.ParsePhoneSecret(secret)
		var p PhoneRecord
		if err == nil {
			p, err = s.store.Phone(r.Context(), id)
		}
		switch {
		case err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, protocol.ErrPhone):
			s.log.Error("read phone", "err", err)
			writeError(w, http.StatusInternalServerError, "the relay could not read its store; try again")
		case err != nil || subtle.ConstantTimeCompare([]byte(protocol.Verifier(secret)), []byte(p.Verifier)) != 1:
			writeError(w, http.StatusUnauthorized, "this phone is not paired (it was removed on the desktop): pair it again from Settings → Phone")
		default:
			h(w, r, p)
		}
	}
}

func (s *Server) resubscribe(w http.ResponseWriter, r *http.Request, p PhoneRecord) {
	var sub protocol.Subscription
	if err := decodeBody(w, r, 8<<10, &sub); err != nil {
		writeError(w, http.StatusBadRequest, "the body must be PushSubscription.toJSON()")
		return
	}
	if err := s.checkSubscription(sub); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if err := s.store.SetSubscription(r.Context(), p.ID, sub); err != nil {
		s.log.Error("keep subscription", "phone", p.ID, "err", err)
		writeError(w, http.StatusInternalServerError, "the subscription could not be kept; try again")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// phoneAnswer answers POST /v1/phone/answers: the sealed answer is
// committed as a delivery of the phone's workspace (202), sent to its
// desktop when it is connected, until acked.
func (s *Server) phoneAnswer(w http.ResponseWriter, r *http.Request, p PhoneRecord) {
	var a protocol.PhoneAnswer
	if err := decodeBody(w, r, 2*protocol.MaxAnswer, &a); err != nil {
		writeError(w, http.StatusBadRequest, `the body must be {"body": the sealed answer in base64}`)
		return
	}
	if len(a.Body) == 0 || len(a.Body) > protocol.MaxAnswer {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("the sealed answer must have 1..%d bytes", protocol.MaxAnswer))
		return
	}
	now := s.cfg.Now()
	rec := Record{WorkspaceID: p.WorkspaceID, ExpiresAt: now.Add(s.cfg.Retention), Delivery: protocol.Delivery{
		ID: newDeliveryID(now), TokenHash: protocol.PhoneAnswerHash, ReceivedAt: now, Method: http.MethodPost,
		Header: http.Header{protocol.HeaderPhone: {p.ID}, "Content-Type": {"application/octet-stream"}}, Body: a.Body}}
	if _, err := s.commit(r.Context(), rec); err != nil {
		s.log.Error("phone answer: store", "workspace", p.WorkspaceID, "err", err)
		writeError(w, http.StatusInternalServerError, "the answer could not be stored; try again")
		return
	}
	s.hub.poke(p.WorkspaceID)
	writeJSON(w, http.StatusAccepted, protocol.Accepted{DeliveryID: rec.ID})
}

func cutString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
