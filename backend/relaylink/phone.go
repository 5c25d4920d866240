package relaylink

// Phones (Settings → Phone): pairing a phone through the relay, the paired
// phones, pushing a notification's card to them (the outbox's "phone"
// channel), and applying the answers they send back. Cards and answers are
// sealed with the phone key (protocol.PhoneKey of the sync key): the relay
// carries ciphertext only, and a phone never holds the sync key.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	qrcode "github.com/skip2/go-qrcode"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/outbox"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/sync/client"
	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// PairingTTL is how long a phone pairing link works.
const PairingTTL = 10 * time.Minute

// KindPhones is published when the paired phones change.
const KindPhones = "phone.devices"

// phonesKey is where the workspace remembers its phones as the relay last
// listed them (meta, JSON): the outbox pushes only when there is one.
const phonesKey = "phone_devices"

// PhoneInvite is a pairing link, shown once: the link carries the one-time
// token and the phone key in its fragment, which no server sees.
type PhoneInvite struct {
	Link      string    `json:"link"`
	QR        string    `json:"qr"` // a data: URL of a PNG QR code of Link
	ExpiresAt time.Time `json:"expires_at"`
}

// phoneFragment is what the link's fragment holds (base64url JSON).
type phoneFragment struct {
	V     int    `json:"v"`
	WS    string `json:"w"` // the workspace's id at the relay
	Token string `json:"t"` // the one-time pairing token
	Key   string `json:"k"` // the phone key, base64url
	Name  string `json:"n"` // the workspace's name
}

// phoneState is what the Service keeps of its phones.
type phoneState struct {
	paired atomic.Bool
	// list orders the reads of the relay's list: a read that asked before
	// a phone paired must not be remembered after a read that asked since
	// (its write can wait long for the database under load).
	list sync.Mutex
}

// PairPhone makes a one-time pairing link for a phone: its token's hash is
// registered with the relay, expiring after PairingTTL.
func (r *Service) PairPhone(ctx context.Context) (PhoneInvite, error) {
	l, c, err := r.apiClient()
	if err != nil {
		return PhoneInvite{}, err
	}
	token := "rpt_" + base64.RawURLEncoding.EncodeToString(newSyncKey())
	expires := time.Now().Add(PairingTTL).UTC().Truncate(time.Second)
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := c.AddPhonePairing(ctx, token, expires); err != nil {
		return PhoneInvite{}, relayError("register the phone pairing", err)
	}
	var name string
	_ = r.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'name'`).Scan(&name)
	frag, _ := json.Marshal(phoneFragment{V: 1, WS: l.WorkspaceID, Token: token,
		Key: base64.RawURLEncoding.EncodeToString(protocol.PhoneKey(l.SyncKey)), Name: name})
	link := l.URL + protocol.PathPhoneApp + "#pair=" + base64.RawURLEncoding.EncodeToString(frag)
	png, err := qrcode.Encode(link, qrcode.Medium, 320)
	if err != nil {
		return PhoneInvite{}, fmt.Errorf("draw the pairing QR code: %w", err)
	}
	r.log.Info("phone pairing link made", "expires", expires)
	return PhoneInvite{Link: link, QR: "data:image/png;base64," + base64.StdEncoding.EncodeToString(png), ExpiresAt: expires}, nil
}

// apiClient returns the link and a client for API calls.
func (r *Service) apiClient() (*relayLink, *client.Client, error) {
	r.mu.Lock()
	l := r.link
	r.mu.Unlock()
	if l == nil {
		return nil, nil, fault.Conflict("link this workspace to a relay first (Settings → Relay): phones reach it through the relay")
	}
	c, err := r.newClient(l, false)
	if err != nil {
		return nil, nil, err
	}
	return l, c, nil
}

// Phones lists the paired phones, as the relay knows them, and remembers
// whether there is one.
func (r *Service) Phones(ctx context.Context) ([]protocol.Phone, error) {
	_, c, err := r.apiClient()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	r.phones.list.Lock()
	defer r.phones.list.Unlock()
	list, err := c.Phones(ctx)
	if err != nil {
		return nil, relayError("list the phones", err)
	}
	r.rememberPhones(ctx, list)
	return list, nil
}

// RemovePhone unpairs a phone: the relay forgets it, its secret stops
// working and it gets no more pushes.
func (r *Service) RemovePhone(ctx context.Context, id string) error {
	_, c, err := r.apiClient()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := c.RemovePhone(ctx, id); err != nil {
		if errors.Is(err, client.ErrNotFound) {
			return fault.NotFound("no phone %q is paired with this workspace", id)
		}
		return relayError("remove the phone", err)
	}
	r.log.Info("phone removed", "phone", id)
	_, err = r.Phones(ctx)
	return err
}

func (r *Service) rememberPhones(ctx context.Context, list []protocol.Phone) {
	b, _ := json.Marshal(list)
	if _, err := r.db.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, phonesKey, string(b)); err != nil {
		r.log.Warn("remember the phones", "err", err)
	}
	if r.phones.paired.Swap(len(list) > 0) != (len(list) > 0) {
		r.bus.Publish(event.Change{Workspace: r.ws, Kind: KindPhones})
	}
}

// loadPhones reads whether a phone was paired when the relay was last
// asked.
func (r *Service) loadPhones(ctx context.Context) {
	var raw string
	_ = r.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, phonesKey).Scan(&raw)
	var list []protocol.Phone
	_ = json.Unmarshal([]byte(raw), &list)
	r.phones.paired.Store(len(list) > 0)
}

// PhonesPaired says whether a phone is paired (outbox.Phones). The outbox
// asks inside a notification's transaction, so it reads no database and
// takes no lock: Unlink holds r.mu while it writes to the database, and
// waiting for r.mu here would hold that write up until SQLite gives up.
// Unlink clears it.
func (r *Service) PhonesPaired() bool {
	return r.phones.paired.Load()
}

// phoneCard is what a push carries to the phone, sealed: the card as the
// outbox rendered and masked it, and what the phone needs to answer a
// connector, budget or credential card (phoneForm), cut to fit a push.
// It never carries a variable's value: a credential card names its
// variable, the phone asks for the value and seals it in the answer.
type phoneCard struct {
	V         int               `json:"v"`
	ID        string            `json:"id"` // the notification
	PauseID   string            `json:"pause_id,omitempty"`
	Kind      string            `json:"kind"`
	Agent     string            `json:"agent"`
	Title     string            `json:"title"`
	Body      string            `json:"body,omitempty"`
	Questions []outbox.Question `json:"questions,omitempty"`
	Items     []outbox.Item     `json:"items,omitempty"`
	phoneForm
	CreatedAt time.Time `json:"created_at"`
}

// phoneForm is the request of a connector, budget or credential card, as
// the phone shows it; at most one is set, by the card's kind.
type phoneForm struct {
	Connector  *phoneConnector  `json:"connector,omitempty"`
	Budget     *phoneBudget     `json:"budget,omitempty"`
	Credential *phoneCredential `json:"credential,omitempty"`
}

// phoneConnector is a connector card's setup form: the phone answers
// {"values": {field: value}} or declines ({"dismiss": true}).
type phoneConnector struct {
	Connector   string        `json:"connector"`
	Description string        `json:"description,omitempty"`
	Fields      []pause.Field `json:"fields"`
}

// phoneBudget is a budget card: what was spent against which limit, and the
// card's proposals for its choices (pause.BudgetAllow, BudgetRaise,
// BudgetStop).
type phoneBudget struct {
	Line         string  `json:"line"` // pause.BudgetRequest.Describe
	Unit         string  `json:"unit"`
	Limit        float64 `json:"limit"`
	Spent        float64 `json:"spent"`
	Need         float64 `json:"need"`
	SuggestMore  float64 `json:"suggest_more"`
	SuggestLimit float64 `json:"suggest_limit"`
}

// phoneCredential is a credential card: the variable, where to get its
// value, and the hosts the variable may be sent to (none: any host).
type phoneCredential struct {
	Variable    string   `json:"variable"`
	Label       string   `json:"label"`
	Description string   `json:"description,omitempty"`
	URL         string   `json:"url,omitempty"`
	Hosts       []string `json:"hosts,omitempty"`
}

// answerable are the card kinds a phone answers; others it only shows.
var answerable = []string{pause.Question, pause.Approval, pause.Connector, pause.Budget, pause.Credential}

// phoneFormOf reads what the phone needs to answer p (a connector, budget
// or credential card), its texts masked with redact; hosts gives a
// variable's host list.
func phoneFormOf(p run.Pause, redact func(string) string, hosts func(string) []string) phoneForm {
	switch p.Kind {
	case pause.Connector:
		c, err := pause.Decode[pause.ConnectorRequest](p.Request)
		if err != nil {
			return phoneForm{}
		}
		for i := range c.Fields {
			f := &c.Fields[i]
			f.Label, f.Placeholder, f.Help = redact(f.Label), redact(f.Placeholder), redact(f.Help)
			for j := range f.Options {
				f.Options[j] = redact(f.Options[j])
			}
		}
		return phoneForm{Connector: &phoneConnector{Connector: redact(c.Connector), Description: redact(c.Description), Fields: c.Fields}}
	case pause.Budget:
		b, err := pause.Decode[pause.BudgetRequest](p.Request)
		if err != nil {
			return phoneForm{}
		}
		return phoneForm{Budget: &phoneBudget{Line: b.Describe(), Unit: b.Unit, Limit: b.Limit, Spent: b.Spent, Need: b.Need,
			SuggestMore: b.SuggestMore, SuggestLimit: b.SuggestLimit}}
	case pause.Credential:
		c, err := pause.Decode[pause.CredentialRequest](p.Request)
		if err != nil {
			return phoneForm{}
		}
		return phoneForm{Credential: &phoneCredential{Variable: c.Variable, Label: redact(c.Label),
			Description: redact(c.Description), URL: redact(c.URL), Hosts: hosts(c.Variable)}}
	}
	return phoneForm{}
}

// sealCard seals m's card, with form, for a push: details are cut, then
// the body, until it fits; a card that still does not fit is shown, not
// answered, on the phone.
func sealCard(key []byte, m outbox.Message, form phoneForm) ([]byte, error) {
	c := phoneCard{V: 1, ID: m.NotificationID, PauseID: m.PauseID, Kind: m.Kind, Agent: cutText(m.Agent, 80),
		Title: cutText(m.Title, 200), Body: m.Body, Questions: m.Questions, Items: m.Items, phoneForm: form, CreatedAt: m.CreatedAt}
	for _, limit := range []int{1000, 300, 80, 0} {
		c.Body = cutText(m.Body, max(limit, 120))
		for i := range c.Items {
			c.Items[i].Detail = cutText(m.Items[i].Detail, limit)
		}
		for i := range c.Questions {
			c.Questions[i].Question = cutText(m.Questions[i].Question, max(limit, 120))
		}
		if sealed, err := sealJSON(key, c); err != nil || len(sealed) <= protocol.MaxPushPayload {
			return sealed, err
		}
	}
	c.Kind, c.Questions, c.Items, c.phoneForm, c.Body = "notice", nil, nil, phoneForm{}, "Too long for the phone: open it on your computer."
	return sealJSON(key, c)
}

func sealJSON(key []byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return protocol.SealPhone(key, protocol.SealCard, b)
}

func cutText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 1 {
		return ""
	}
	return string([]rune(s)[:n-1]) + "…"
}

// PushPhones seals m's card with the phone key and pushes it to every
// paired phone through the relay (outbox.Phones).
func (r *Service) PushPhones(ctx context.Context, sendID string, m outbox.Message) error {
	l, c, err := r.apiClient()
	if err != nil {
		return err
	}
	var form phoneForm
	if m.PauseID != "" {
		if p, err := r.runs.GetPause(ctx, m.PauseID); err == nil {
			form = phoneFormOf(p, r.vars.Redact, r.vars.Hosts)
		}
	}
	sealed, err := sealCard(protocol.PhoneKey(l.SyncKey), m, form)
	if err != nil {
		return err
	}
	out, err := c.PushPhones(ctx, protocol.PhonePush{ID: sendID, Tag: m.NotificationID, Body: sealed})
	if err != nil {
		return relayError("push to the phones", err)
	}
	if len(out.Gone) > 0 {
		go r.Phones(context.WithoutCancel(ctx)) // the relay forgot some: refresh what is remembered
	}
	return nil
}

// PhoneAnswer is what a phone sends back, sealed: the answer to one card,
// in the same JSON the app sends (POST …/pauses/{id}/answer).
type PhoneAnswer struct {
	V              int             `json:"v"`
	NotificationID string          `json:"notification_id"`
	PauseID        string          `json:"pause_id"`
	PhoneID        string          `json:"phone_id"`
	Answer         json.RawMessage `json:"answer"`
	At             time.Time       `json:"at"`
}

// ReadPhoneAnswer opens a phone's sealed answer with the phone key and
// says what is wrong with it. phone is the phone the relay authenticated:
// the sealed body must name the same one.
func ReadPhoneAnswer(key []byte, phone string, sealed []byte) (PhoneAnswer, error) {
	plain, err := protocol.OpenPhone(key, protocol.SealAnswer, sealed)
	if err != nil {
		return PhoneAnswer{}, err
	}
	var a PhoneAnswer
	if err := json.Unmarshal(plain, &a); err != nil {
		return PhoneAnswer{}, fmt.Errorf("the phone's answer is not JSON: %w", err)
	}
	switch {
	case a.V != 1:
		return PhoneAnswer{}, fmt.Errorf("the phone's answer has version %d; update the phone's page (reload it)", a.V)
	case a.PauseID == "" || len(a.PauseID) > 100 || strings.ContainsAny(a.PauseID, "/?#"):
		return PhoneAnswer{}, errors.New("the phone's answer names no card")
	case a.PhoneID != phone:
		return PhoneAnswer{}, fmt.Errorf("the answer was sealed by phone %.40q but sent by %.40q", a.PhoneID, phone)
	case len(a.Answer) == 0 || a.Answer[0] != '{':
		return PhoneAnswer{}, errors.New("the phone's answer is not an object")
	}
	return a, nil
}

// phoneAnswer applies an answer a phone sent through the relay, exactly as
// if it was given in the app. An answer that can never apply (the card was
// answered already, it is not one a phone answers, the seal is wrong) is
// refused; a store error is retried by the relay.
func (r *Service) phoneAnswer(ctx context.Context, l *relayLink, d client.Delivery) (string, error) {
	phone := d.Header.Get(protocol.HeaderPhone)
	a, err := ReadPhoneAnswer(protocol.PhoneKey(l.SyncKey), phone, d.Body)
	if err != nil {
		r.log.Warn("phone answer refused", "phone", phone, "err", err)
		return "", fmt.Errorf("%w: %v", client.ErrRefused, err) // the seal or shape is wrong: no value in it
	}
	p, err := r.runs.GetPause(ctx, a.PauseID)
	switch {
	case errors.Is(err, fault.ErrNotFound):
		return "", fmt.Errorf("%w: no card %s", client.ErrRefused, a.PauseID)
	case err != nil:
		return "", err
	case !contains(answerable, p.Kind):
		return "", fmt.Errorf("%w: a %s card is answered on the computer", client.ErrRefused, p.Kind)
	case p.Status != pause.Open:
		// Single use: a second answer (from the app, or a replay) changes nothing.
		r.log.Info("phone answer for a card no longer open", "pause", p.ID, "status", p.Status)
		return p.RunID, nil
	}
	// A credential's value, and a form's secret fields, are in a.Answer:
	// it is never logged, and what is said of an error is masked (the
	// relay keeps a refusal's reason).
	if _, err := r.runs.Answer(ctx, p.ID, a.Answer); err != nil {
		msg := r.vars.Redact(err.Error())
		if errors.Is(err, fault.ErrInvalid) || errors.Is(err, fault.ErrConflict) || errors.Is(err, fault.ErrNotFound) {
			r.log.Warn("phone answer refused", "pause", p.ID, "phone", phone, "err", msg)
			return "", fmt.Errorf("%w: %s", client.ErrRefused, msg)
		}
		return "", fmt.Errorf("apply the phone's answer: %s", msg)
	}
	r.log.Info("card answered from a phone", "pause", p.ID, "phone", phone, "at", store.FormatTime(a.At))
	return p.RunID, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
