package client

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
)

// PairingPrefix starts every pairing code; the number is the code's
// version.
const PairingPrefix = "rerun-pair-1."

// maxPairingCode bounds a code read from outside: a real one is a few
// hundred characters.
const maxPairingCode = 8 << 10

// ErrPairing: a pairing code that cannot be read.
var ErrPairing = errors.New("not a valid pairing code")

// Pairing is what a second device needs to join a workspace: handed over as a code.
type Pairing struct {
	RelayURL    string `json:"relay"`
	WorkspaceID string `json:"workspace_id"` // the relay's workspace id
	Secret      string `json:"secret"`
	SyncKey     []byte `json:"key"`  // 32 bytes: the end-to-end key the relay never sees
	Workspace   string `json:"ws"`   // the desktop's own workspace id (opaque here)
	Name        string `json:"name"` // its name, for the joining device's UI
}

// Code returns the pairing as a code to copy or show as a QR code:
// PairingPrefix and the base64url (no padding) of its JSON. The code holds
// the workspace secret and the sync key: show it only to the person
// pairing their own device.
func (p Pairing) Code() string {
	b, err := json.Marshal(p)
	if err != nil {
		panic(err) // a Pairing always marshals
	}
	return PairingPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// String shows the pairing without its secret and key, so that a pairing
// printed or logged by mistake gives nothing away.
func (p Pairing) String() string {
	return fmt.Sprintf("pairing of %q (%s) on %s as %s", p.Name, p.Workspace, p.RelayURL, p.WorkspaceID)
}

// GoString is String: %#v prints no secret either.
func (p Pairing) GoString() string { return p.String() }

// LogValue is what slog prints of a pairing: never the secret or the key.
func (p Pairing) LogValue() slog.Value {
	return slog.GroupValue(slog.String("relay", p.RelayURL), slog.String("workspace_id", p.WorkspaceID),
		slog.String("ws", p.Workspace), slog.String("name", p.Name))
}

// ParsePairing reads a code made by [Pairing.Code]. Spaces and line breaks
// anywhere in it (a code pasted from a chat or an email) are ignored. The
// errors wrap [ErrPairing] and say what is wrong.
func ParsePairing(code string) (Pairing, error) {
	code = strings.Join(strings.Fields(code), "")
	if len(code) > maxPairingCode {
		return Pairing{}, fmt.Errorf("%w: it is %d characters long; a pairing code has a few hundred", ErrPairing, len(code))
	}
	rest, ok := strings.CutPrefix(code, PairingPrefix)
	if !ok {
		if strings.HasPrefix(code, "rerun-pair-") {
			return Pairing{}, fmt.Errorf("%w: it was made by another version of Rerun (it does not start with %q); update both devices", ErrPairing, PairingPrefix)
		}
		return Pairing{}, fmt.Errorf("%w: it does not start with %q; copy the whole code from Settings → Relay on the other device", ErrPairing, PairingPrefix)
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(rest, "="))
	if err != nil {
		return Pairing{}, fmt.Errorf("%w: the part after %q is damaged (not base64url: %v); copy the code again", ErrPairing, PairingPrefix, err)
	}
	var p Pairing
	if err := json.Unmarshal(b, &p); err != nil {
		return Pairing{}, fmt.Errorf("%w: its content is damaged (not JSON: %v); copy the code again", ErrPairing, err)
	}
	var missing []string
	for _, f := range []struct {
		name  string
		empty bool
	}{{"relay", p.RelayURL == ""}, {"workspace_id", p.WorkspaceID == ""}, {"secret", p.Secret == ""},
		{"key", len(p.SyncKey) == 0}, {"ws", p.Workspace == ""}} {
		if f.empty {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return Pairing{}, fmt.Errorf("%w: it lacks %s", ErrPairing, strings.Join(missing, ", "))
	}
	if len(p.SyncKey) != 32 {
		return Pairing{}, fmt.Errorf("%w: its sync key has %d bytes, not 32", ErrPairing, len(p.SyncKey))
	}
	u, err := url.Parse(p.RelayURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return Pairing{}, fmt.Errorf("%w: its relay %.100q is not an http(s) URL", ErrPairing, p.RelayURL)
	}
	return p, nil
}
