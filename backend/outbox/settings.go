package outbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// TLS modes of the SMTP connection.
const (
	StartTLS = "starttls" // plain connection upgraded with STARTTLS (port 587)
	TLS      = "tls"      // implicit TLS from the first byte (port 465)
	NoTLS    = "none"     // no encryption: only to a server on this computer
)

// Email is Settings → Notifications → Email. Host "" means email is off.
// Password is never a value: it names the workspace variable that holds
// it ("${SMTP_PASSWORD}").
type Email struct {
	Host     string `json:"host"`
	Port     int    `json:"port"`
	TLS      string `json:"tls"`
	User     string `json:"user"`
	Password string `json:"password"`
	From     string `json:"from"`
	To       string `json:"to"` // one address or several, comma-separated
}

// Hook flavours: the shape of the POST.
const (
	Slack   = "slack"   // a Slack incoming webhook: {"text": …}
	Discord = "discord" // a Discord webhook: {"content": …}
	Ntfy    = "ntfy"    // an ntfy topic URL: the text, with Title and Click headers
	JSON    = "json"    // any URL: the notification as JSON, signed the Standard Webhooks way
)

var flavours = []string{Slack, Discord, Ntfy, JSON}

// MaxHooks bounds the outgoing hooks of a workspace.
const MaxHooks = 20

// Hook is one outgoing notification hook. URL may hold variable references
// (a Slack webhook's path is a secret: https://hooks.slack.com/services/${SLACK_HOOK});
// they are resolved when it is sent. Secret, for the json flavour, names the
// variable holding the signing key ("${HOOK_SECRET}"; a value written
// whsec_<base64> is decoded as Standard Webhooks says). Kinds, when not
// empty, narrows which notification kinds go to it; the per-kind "hooks"
// switch of the delivery settings decides first.
type Hook struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Flavour string   `json:"flavour"`
	URL     string   `json:"url"`
	Secret  string   `json:"secret"`
	Kinds   []string `json:"kinds"`
}

// Where the workspace keeps them (meta, as JSON).
const (
	emailKey = "notification_email"
	hooksKey = "notification_hooks"
)

var reference = regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$`)

// Check validates and normalises email settings; has says whether a
// workspace variable exists. Host "" turns email off (the rest is cleared).
func (e *Email) Check(has func(name string) bool) error {
	e.Host = strings.TrimSpace(e.Host)
	if e.Host == "" {
		*e = Email{}
		return nil
	}
	if strings.ContainsAny(e.Host, " /:@") && net.ParseIP(e.Host) == nil {
		return fault.Invalid("SMTP host %q must be a host name or an IP address, without a scheme, port or path (e.g. smtp.example.com)", e.Host)
	}
	e.TLS = strings.ToLower(strings.TrimSpace(e.TLS))
	switch e.TLS {
	case "":
		e.TLS = StartTLS
	case StartTLS, TLS:
	case NoTLS:
		if !local(e.Host) {
			return fault.Invalid("TLS mode none sends the password and the mail in the clear: it is allowed only for a server on this computer (127.0.0.1 or localhost); use starttls or tls for %s", e.Host)
		}
	default:
		return fault.Invalid("TLS mode %q is unknown; use starttls (port 587), tls (implicit TLS, port 465) or none (only for 127.0.0.1)", e.TLS)
	}
	if e.Port == 0 {
		e.Port = map[string]int{StartTLS: 587, TLS: 465, NoTLS: 25}[e.TLS]
	}
	if e.Port < 1 || e.Port > 65535 {
		return fault.Invalid("SMTP port %d must be between 1 and 65535 (587 for starttls, 465 for tls)", e.Port)
	}
	e.User = strings.TrimSpace(e.User)
	e.Password = strings.TrimSpace(e.Password)
	if e.Password != "" {
		m := reference.FindStringSubmatch(e.Password)
		if m == nil {
			return fault.Invalid("the SMTP password must be a workspace variable written ${NAME} (e.g. ${SMTP_PASSWORD}), never the password itself: add it in Settings → Variables")
		}
		if has != nil && !has(m[1]) {
			return fault.Invalid("there is no workspace variable %s: add it in Settings → Variables, then save again", m[1])
		}
		if e.User == "" {
			return fault.Invalid("a password needs a user: give the SMTP user name")
		}
	}
	from, err := mail.ParseAddress(strings.TrimSpace(e.From))
	if err != nil {
		return fault.Invalid("from address %q is not an email address (e.g. Rerun <rerun@example.com>)", e.From)
	}
	e.From = from.String()
	to, err := mail.ParseAddressList(strings.TrimSpace(e.To))
	if err != nil || len(to) == 0 {
		return fault.Invalid("to address %q is not an email address or a comma-separated list of them", e.To)
	}
	list := make([]string, len(to))
	for i, a := range to {
		list[i] = a.String()
	}
	e.To = strings.Join(list, ", ")
	return nil
}

// local says whether host is this computer.
func local(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Check validates and normalises a hook; has says whether a workspace
// variable exists.
func (h *Hook) Check(has func(name string) bool) error {
	h.Name = strings.TrimSpace(h.Name)
	h.Flavour = strings.ToLower(strings.TrimSpace(h.Flavour))
	if !slices.Contains(flavours, h.Flavour) {
		return fault.Invalid("hook flavour %q is unknown; use %s", h.Flavour, strings.Join(flavours, ", "))
	}
	h.URL = strings.TrimSpace(h.URL)
	// Check the URL with its references stood in for: they resolve at send time.
	probe := regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*\}`).ReplaceAllString(h.URL, "x")
	u, err := url.Parse(probe)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fault.Invalid("hook URL %q must be a full http(s) URL, e.g. https://hooks.slack.com/services/${SLACK_HOOK}", h.URL)
	}
	if u.Scheme == "http" && !local(u.Hostname()) {
		return fault.Invalid("hook URL %q must use https (plain http only for 127.0.0.1 or localhost): a notification is private", h.URL)
	}
	if u.User != nil {
		return fault.Invalid("hook URL %q carries a password: put it in a workspace variable and write ${NAME} in the URL instead", h.URL)
	}
	for _, m := range regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`).FindAllStringSubmatch(h.URL, -1) {
		if has != nil && !has(m[1]) {
			return fault.Invalid("hook URL names variable %s, which does not exist: add it in Settings → Variables", m[1])
		}
	}
	h.Secret = strings.TrimSpace(h.Secret)
	switch {
	case h.Flavour == JSON && h.Secret == "":
		return fault.Invalid("a json hook is signed: give the variable holding its signing secret, written ${NAME}")
	case h.Flavour != JSON && h.Secret != "":
		return fault.Invalid("only json hooks are signed; a %s hook takes no secret", h.Flavour)
	case h.Secret != "":
		m := reference.FindStringSubmatch(h.Secret)
		if m == nil {
			return fault.Invalid("the signing secret must be a workspace variable written ${NAME} (e.g. ${HOOK_SECRET}), never the secret itself")
		}
		if has != nil && !has(m[1]) {
			return fault.Invalid("there is no workspace variable %s: add it in Settings → Variables, then save again", m[1])
		}
	}
	for _, k := range h.Kinds {
		if !slices.Contains(notify.Kinds, k) {
			return fault.Invalid("hook kind %q is unknown; use %s", k, strings.Join(notify.Kinds, ", "))
		}
	}
	if h.Name == "" {
		h.Name = h.Flavour + " " + u.Hostname()
	}
	return nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func readMeta(ctx context.Context, q querier, key string, into any) error {
	var raw string
	err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	return json.Unmarshal([]byte(raw), into)
}

func (s *Service) writeMeta(ctx context.Context, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = s.d.DB.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, string(b))
	return err
}

// Email returns the email settings (Host "" when email is off).
func (s *Service) Email(ctx context.Context) (Email, error) {
	var e Email
	if err := readMeta(ctx, s.d.DB, emailKey, &e); err != nil {
		return Email{}, fmt.Errorf("read email settings: %w", err)
	}
	return e, nil
}

// SetEmail checks and saves the email settings and announces
// "settings.changed" (ID "notifications").
func (s *Service) SetEmail(ctx context.Context, e Email) (Email, error) {
	if err := e.Check(s.d.Vars.Has); err != nil {
		return Email{}, err
	}
	if err := s.writeMeta(ctx, emailKey, e); err != nil {
		return Email{}, fmt.Errorf("save email settings: %w", err)
	}
	s.publish("settings.changed", "notifications", "")
	return e, nil
}

// Hooks returns the outgoing notification hooks.
func (s *Service) Hooks(ctx context.Context) ([]Hook, error) {
	hooks := []Hook{}
	if err := readMeta(ctx, s.d.DB, hooksKey, &hooks); err != nil {
		return nil, fmt.Errorf("read notification hooks: %w", err)
	}
	return hooks, nil
}

// SetHooks replaces the hooks, checking each; a hook without an id gets
// one. Entries queued for a removed hook fail when their turn comes.
func (s *Service) SetHooks(ctx context.Context, hooks []Hook) ([]Hook, error) {
	if len(hooks) > MaxHooks {
		return nil, fault.Invalid("at most %d hooks (got %d)", MaxHooks, len(hooks))
	}
	if hooks == nil {
		hooks = []Hook{}
	}
	seen := map[string]bool{}
	for i := range hooks {
		if err := hooks[i].Check(s.d.Vars.Has); err != nil {
			return nil, fmt.Errorf("hook %d: %w", i+1, err)
		}
		if hooks[i].ID == "" {
			hooks[i].ID = store.NewID("hk")
		}
		if seen[hooks[i].ID] {
			return nil, fault.Invalid("hook id %q appears twice", hooks[i].ID)
		}
		seen[hooks[i].ID] = true
	}
	if err := s.writeMeta(ctx, hooksKey, hooks); err != nil {
		return nil, fmt.Errorf("save notification hooks: %w", err)
	}
	s.publish("settings.changed", "notifications", "")
	return hooks, nil
}
