package client_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/sync/client"
)

var pairing = client.Pairing{RelayURL: "https://relay.example.com", WorkspaceID: "ws_0123456789abcdef",
	Secret: "rrs_secretsecretsecretsecretsecretsecret", SyncKey: bytes.Repeat([]byte{7}, 32), Workspace: "wsp_local", Name: "Acme"}

func TestPairingCode(t *testing.T) {
	code := pairing.Code()
	if !strings.HasPrefix(code, "rerun-pair-1.") || strings.ContainsAny(code, "=+/ \n") {
		t.Fatalf("code %q: want rerun-pair-1. and unpadded base64url", code)
	}
	// Pasted from an email: wrapped, indented, with a trailing newline.
	wrapped := "  " + code[:20] + "\n  " + code[20:50] + "\r\n" + code[50:] + "\n"
	for _, in := range []string{code, wrapped} {
		got, err := client.ParsePairing(in)
		if err != nil || got.RelayURL != pairing.RelayURL || got.WorkspaceID != pairing.WorkspaceID || got.Secret != pairing.Secret ||
			!bytes.Equal(got.SyncKey, pairing.SyncKey) || got.Workspace != pairing.Workspace || got.Name != pairing.Name {
			t.Errorf("parse %q: got %+v (%v), want the pairing back", in, got, err)
		}
	}
}

func TestParsePairingErrors(t *testing.T) {
	encode := func(json string) string { return "rerun-pair-1." + base64.RawURLEncoding.EncodeToString([]byte(json)) }
	with := func(f func(p *client.Pairing)) string { p := pairing; f(&p); return p.Code() }
	for _, tc := range []struct {
		name, code, want string
	}{
		{"empty", "", `does not start with "rerun-pair-1."`},
		{"a secret, not a code", "rrs_abc", `does not start with "rerun-pair-1."`},
		{"another version", "rerun-pair-2.e30", "another version of Rerun"},
		{"bad base64", "rerun-pair-1.!!!", "not base64url"},
		{"bad JSON", encode(`{"relay":`), "not JSON"},
		{"JSON not an object", encode(`[1]`), "not JSON"},
		{"missing fields", encode(`{"relay":"https://r.example"}`), "it lacks workspace_id, secret, key, ws"},
		{"short key", with(func(p *client.Pairing) { p.SyncKey = []byte("short") }), "5 bytes, not 32"},
		{"relay not http", with(func(p *client.Pairing) { p.RelayURL = "ftp://relay.example.com" }), "not an http(s) URL"},
		{"relay without host", with(func(p *client.Pairing) { p.RelayURL = "https://" }), "not an http(s) URL"},
		{"too long", "rerun-pair-1." + strings.Repeat("A", 9000), "characters long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := client.ParsePairing(tc.code)
			if !errors.Is(err, client.ErrPairing) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want ErrPairing saying %q", err, tc.want)
			}
		})
	}
}

// TestPairingNeverPrinted: printed or logged by mistake, a pairing shows
// neither its secret nor its key.
func TestPairingNeverPrinted(t *testing.T) {
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("paired", "pairing", pairing)
	for _, out := range []string{fmt.Sprint(pairing), fmt.Sprintf("%v %+v %#v %s", pairing, pairing, pairing, pairing), logged.String()} {
		if strings.Contains(out, pairing.Secret) || strings.Contains(out, base64.StdEncoding.EncodeToString(pairing.SyncKey)) ||
			!strings.Contains(out, "relay.example.com") {
			t.Errorf("got %q, want the relay without the secret or key", out)
		}
	}
}

// FuzzParsePairing: any pasted text parses or fails with ErrPairing,
// never panics; what parses is complete and makes the same code again.
func FuzzParsePairing(f *testing.F) {
	f.Add(pairing.Code())
	f.Add("rerun-pair-1.")
	f.Add("rerun-pair-1.e30")
	f.Add(" rerun-pair-1.eyJyZWxheSI6Imh0dHA6Ly94In0\n")
	f.Fuzz(func(t *testing.T, code string) {
		p, err := client.ParsePairing(code)
		if err != nil {
			if !errors.Is(err, client.ErrPairing) {
				t.Fatalf("error %v does not wrap ErrPairing", err)
			}
			return
		}
		if len(p.SyncKey) != 32 || p.Secret == "" || p.WorkspaceID == "" || p.Workspace == "" ||
			!strings.HasPrefix(strings.ToLower(p.RelayURL), "http") {
			t.Fatalf("parsed an incomplete pairing %+v", p)
		}
		again, err := client.ParsePairing(p.Code())
		if err != nil || again.Code() != p.Code() {
			t.Fatalf("a parsed pairing does not make its code again: %v", err)
		}
	})
}
