package notify

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Origins: who started the run a notification comes from.
const (
	Mine      = "mine"      // the person, in chat
	Automated = "automated" // a schedule, a trigger, another agent or the API
)

// Channels a notification is delivered on. Whatever they say, every
// notification stays listed in the panel and open pauses always count on the
// bell.
const (
	InApp = "in_app" // a toast in the window
	OS    = "os"     // an OS notification from the desktop app
	Email = "email"  // a mail through the workspace's SMTP settings (package outbox)
	Hooks = "hooks"  // a POST to each outgoing notification hook (package outbox)
	Phone = "phone"  // a push to each paired phone, through the relay (package outbox)
)

var (
	origins  = []string{Mine, Automated}
	channels = []string{InApp, OS, Email, Hooks, Phone}
)

// Delivery says, by kind, origin and channel, whether a notification is
// delivered there: Delivery[kind][origin][channel].
type Delivery map[string]map[string]map[string]bool

// metaKey is where the workspace keeps its Delivery (in meta, as JSON).
const metaKey = "notification_delivery"

// DefaultDelivery is what a workspace starts with: everything in the window;
// an OS notification for whatever waits for the person and for errors, and
// for done and info only from runs that fired on their own (the person is
// watching the ones they started); never for progress. Email, hooks and phones carry
// what waits for the person and errors from runs that fired on their own
// (they arrive only once email, a hook or a phone is set up).
func DefaultDelivery() Delivery {
	d := Delivery{}
	for _, k := range Kinds {
		d[k] = map[string]map[string]bool{}
		for _, o := range origins {
			osOn := k != Progress
			if (k == Done || k == Info) && o == Mine {
				osOn = false
			}
			away := o == Automated && (k == Error || slices.Contains(pauseKinds, k))
			d[k][o] = map[string]bool{InApp: true, OS: osOn, Email: away, Hooks: away, Phone: away}
		}
	}
	return d
}

// Wants says whether n is delivered on channel (InApp, OS, Email, Hooks or Phone).
func (d Delivery) Wants(n Notification, channel string) bool {
	origin := Mine
	if n.Automated {
		origin = Automated
	}
	return d[n.Kind][origin][channel]
}

// UnmarshalJSON reads {kind: {origin: {channel: true|false}}} and says where
// a value is not a boolean or a level is not an object. Unknown names are
// checked by SetDelivery.
func (d *Delivery) UnmarshalJSON(b []byte) error {
	var kinds map[string]json.RawMessage
	if err := json.Unmarshal(b, &kinds); err != nil {
		return fault.Invalid(`delivery settings must be an object like {"question": {"mine": {"in_app": true, "os": true}}}`)
	}
	out := Delivery{}
	for k, rawKind := range kinds {
		var byOrigin map[string]json.RawMessage
		if err := json.Unmarshal(rawKind, &byOrigin); err != nil {
			return fault.Invalid(`%q in delivery settings must be an object of origins, like {"mine": {"in_app": true, "os": true}}`, k)
		}
		out[k] = map[string]map[string]bool{}
		for o, rawOrigin := range byOrigin {
			var byChannel map[string]json.RawMessage
			if err := json.Unmarshal(rawOrigin, &byChannel); err != nil {
				return fault.Invalid(`%q.%q in delivery settings must be an object of channels, like {"in_app": true, "os": false}`, k, o)
			}
			out[k][o] = map[string]bool{}
			for c, rawOn := range byChannel {
				var on bool
				if err := json.Unmarshal(rawOn, &on); err != nil || string(rawOn) == "null" {
					return fault.Invalid("%q.%q.%q in delivery settings must be true or false, not %s", k, o, c, cut(string(rawOn), 40))
				}
				out[k][o][c] = on
			}
		}
	}
	*d = out
	return nil
}

// overlay sets every value d names on base (which it changes) and refuses
// unknown kinds, origins and channels.
func (d Delivery) overlay(base Delivery) error {
	for k, byOrigin := range d {
		if _, ok := base[k]; !ok {
			return fault.Invalid("unknown notification kind %q in delivery settings; use %s", k, strings.Join(Kinds, ", "))
		}
		for o, byChannel := range byOrigin {
			if _, ok := base[k][o]; !ok {
				return fault.Invalid("unknown origin %q under %q in delivery settings; use %s", o, k, strings.Join(origins, " or "))
			}
			for c, on := range byChannel {
				if _, ok := base[k][o][c]; !ok {
					return fault.Invalid("unknown channel %q under %q.%q in delivery settings; use %s", c, k, o, strings.Join(channels, ", "))
				}
				base[k][o][c] = on
			}
		}
	}
	return nil
}

// Delivery returns the workspace's delivery settings, complete: what was
// never set is the default.
func (s *Service) Delivery(ctx context.Context) (Delivery, error) {
	var raw string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, metaKey).Scan(&raw)
	d := DefaultDelivery()
	if errors.Is(err, sql.ErrNoRows) {
		return d, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read notification delivery: %w", err)
	}
	var saved Delivery
	if err := json.Unmarshal([]byte(raw), &saved); err != nil {
		return nil, fmt.Errorf("read notification delivery: %w", err)
	}
	// Keep what is still known: a kind dropped in a later version is ignored.
	for k, byOrigin := range saved {
		for o, byChannel := range byOrigin {
			for c, on := range byChannel {
				if _, ok := d[k][o][c]; ok {
					d[k][o][c] = on
				}
			}
		}
	}
	return d, nil
}

// SetDelivery replaces the delivery settings. in may be partial: what it
// leaves out takes the default (not the previous value), so sending the whole
// document is the way to keep a choice. Unknown kinds, origins and channels
// are refused with what to use. It announces "settings.changed" (ID
// "notifications").
func (s *Service) SetDelivery(ctx context.Context, in Delivery) (Delivery, error) {
	d := DefaultDelivery()
	if err := in.overlay(d); err != nil {
		return nil, err
	}
	b, _ := json.Marshal(d)
	_, err := s.db.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, metaKey, string(b))
	if err != nil {
		return nil, fmt.Errorf("save notification delivery: %w", err)
	}
	s.publish("settings.changed", "notifications", "")
	return d, nil
}
