package secret

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zalando/go-keyring"
)

// TestMain swaps the OS keychain for go-keyring's in-memory mock, so no test
// reads or writes the keychain of the person running them.
func TestMain(m *testing.M) {
	keyring.MockInit()
	os.Exit(m.Run())
}

func TestLoadKey(t *testing.T) {
	fileKey := bytes.Repeat([]byte{7}, 32)
	otherKey := bytes.Repeat([]byte{9}, 32)
	b64 := base64.StdEncoding.EncodeToString
	tests := []struct {
		name     string
		keychain error          // nil: the mock keychain; else every keychain call fails with it
		opts     KeyOptions     // ring and timeout; Keychain is set from keychain
		off      bool           // KeyOptions.Keychain false
		inRing   string         // the keychain entry before ("": none)
		file     []byte         // secret.key before (nil: none)
		want     []byte         // the key (nil: any new 32 bytes)
		where    KeyStore       // "" : an error is wanted
		errHas   string         // with where ""
		noteHas  []string       // "<path>" stands for secret.key's path
		fileLeft bool           // secret.key exists after
		ringLeft bool           // the keychain holds the key after
		wantRing func() keyRing // a fake instead of the mock
	}{
		{name: "keychain off, no file: new key in the file", off: true,
			where: KeyStoreFile, noteHas: []string{"RERUN_KEYCHAIN=off", "<path>", "readable only by you"}, fileLeft: true},
		{name: "keychain off, file: its key", off: true, file: fileKey, want: fileKey, inRing: b64(otherKey),
			where: KeyStoreFile, fileLeft: true, noteHas: []string{"<path>"}},
		{name: "empty keychain, no file: new key in the keychain",
			where: KeyStoreKeychain, ringLeft: true, noteHas: []string{"OS keychain", "Rerun Desktop"}},
		{name: "empty keychain, file: key moved into the keychain", file: fileKey, want: fileKey,
			where: KeyStoreKeychain, ringLeft: true},
		{name: "keychain key wins", inRing: b64(otherKey), want: otherKey,
			where: KeyStoreKeychain, ringLeft: true},
		{name: "file left over from a move is removed", inRing: b64(fileKey), file: fileKey, want: fileKey,
			where: KeyStoreKeychain, ringLeft: true},
		{name: "a different file is kept", inRing: b64(otherKey), file: fileKey, want: otherKey,
			where: KeyStoreKeychain, ringLeft: true, fileLeft: true},
		{name: "keychain unreachable, no file: new key in the file", keychain: errors.New("dbus: no session bus"),
			where: KeyStoreFile, fileLeft: true, noteHas: []string{"No OS keychain was reachable", "<path>", "readable only by you"}},
		{name: "keychain unreachable, file: its key", keychain: errors.New("exit status 51"), file: fileKey, want: fileKey,
			where: KeyStoreFile, fileLeft: true, noteHas: []string{"No OS keychain was reachable"}},
		{name: "keychain hangs: file after the timeout", file: fileKey, want: fileKey,
			wantRing: func() keyRing { return hangingRing{} }, opts: KeyOptions{timeout: 20 * time.Millisecond},
			where: KeyStoreFile, fileLeft: true, noteHas: []string{"No OS keychain was reachable"}},
		{name: "keychain loses what it is given: file kept", file: fileKey, want: fileKey,
			wantRing: func() keyRing { return &forgetfulRing{} },
			where:    KeyStoreFile, fileLeft: true},
		{name: "keychain entry is not a key", inRing: "not a key",
			errHas: "does not hold a 32-byte key (account "},
		{name: "file is not a key", file: []byte("short"),
			errHas: "is 5 bytes, want 32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "secret.key")
			if tt.keychain != nil {
				keyring.MockInitWithError(tt.keychain)
			} else {
				keyring.MockInit()
			}
			t.Cleanup(keyring.MockInit)
			if tt.inRing != "" {
				keyring.Set("Rerun Desktop", dir, tt.inRing)
			}
			if tt.file != nil {
				os.WriteFile(path, tt.file, 0o600)
			}
			o := tt.opts
			o.Keychain = !tt.off
			var ring keyRing = osKeychain{}
			if tt.wantRing != nil {
				ring = tt.wantRing()
				o.ring = ring
			}

			key, where, note, err := LoadKey(dir, o)

			if tt.where == "" {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("got %v, want an error containing %q", err, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if where != tt.where {
				t.Errorf("where = %q, want %q", where, tt.where)
			}
			if len(key) != 32 || tt.want != nil && !bytes.Equal(key, tt.want) {
				t.Errorf("key = %x, want %x (32 bytes)", key, tt.want)
			}
			for _, s := range tt.noteHas {
				s = strings.ReplaceAll(s, "<path>", path)
				if !strings.Contains(note, s) {
					t.Errorf("note %q does not contain %q", note, s)
				}
			}
			onDisk, ferr := os.ReadFile(path)
			if tt.fileLeft != (ferr == nil) {
				t.Errorf("secret.key left = %v, want %v", ferr == nil, tt.fileLeft)
			}
			if tt.fileLeft && where == KeyStoreFile {
				if !bytes.Equal(onDisk, key) {
					t.Errorf("secret.key holds %x, want the key %x", onDisk, key)
				}
				if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
					t.Errorf("secret.key mode = %v, want 0600", fi.Mode().Perm())
				}
			}
			if _, hangs := ring.(hangingRing); !hangs {
				stored, rerr := ring.Get("Rerun Desktop", dir)
				if got := rerr == nil && stored == b64(key); got != tt.ringLeft {
					t.Errorf("keychain holds the key = %v (%v), want %v", got, rerr, tt.ringLeft)
				}
			}
			// The same call again finds the same key.
			again, where2, _, err := LoadKey(dir, o)
			if err != nil || !bytes.Equal(again, key) || where2 != where {
				t.Errorf("second LoadKey = %x %q %v, want %x %q", again, where2, err, key, where)
			}
		})
	}
}

func TestLoadKeyAccountIsAbsoluteDataDir(t *testing.T) {
	keyring.MockInit()
	base := t.TempDir()
	t.Chdir(base)
	key, where, _, err := LoadKey("data", KeyOptions{Keychain: true})
	if err != nil || where != KeyStoreKeychain {
		t.Fatalf("LoadKey = %q, %v; want the keychain", where, err)
	}
	stored, err := keyring.Get("Rerun Desktop", filepath.Join(base, "data"))
	if err != nil || stored != base64.StdEncoding.EncodeToString(key) {
		t.Errorf("keychain entry for %s = %q, %v; want the key", filepath.Join(base, "data"), stored, err)
	}
	// Another data folder has its own key.
	other, _, _, _ := LoadKey(filepath.Join(base, "other"), KeyOptions{Keychain: true})
	if bytes.Equal(other, key) {
		t.Error("two data folders share a key")
	}
}

func TestNewBox(t *testing.T) {
	for _, n := range []int{0, 16, 31, 33} {
		if _, err := NewBox(make([]byte, n)); err == nil || !strings.Contains(err.Error(), "want 32") {
			t.Errorf("NewBox(%d bytes) = %v, want an error saying the size", n, err)
		}
	}
	// A key moved out of secret.key opens what OpenBox sealed with it.
	path := filepath.Join(t.TempDir(), "secret.key")
	old, err := OpenBox(path)
	if err != nil {
		t.Fatal(err)
	}
	sealed := old.Seal("sk-value", "anthropic")
	keyring.MockInit()
	key, _, _, err := LoadKey(filepath.Dir(path), KeyOptions{Keychain: true})
	if err != nil {
		t.Fatal(err)
	}
	box, err := NewBox(key)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := box.Open(sealed, "anthropic"); err != nil || got != "sk-value" {
		t.Errorf("Open after the move = %q, %v; want the value", got, err)
	}
	other, _ := NewBox(bytes.Repeat([]byte{1}, 32))
	if _, err := other.Open(sealed, "anthropic"); !errors.Is(err, ErrWrongKey) {
		t.Errorf("Open with another key = %v, want ErrWrongKey", err)
	}
}

// hangingRing never answers, like a Secret Service nobody serves.
type hangingRing struct{}

func (hangingRing) Get(string, string) (string, error) { select {} }
func (hangingRing) Set(string, string, string) error   { select {} }
func (hangingRing) Delete(string, string) error        { select {} }

// forgetfulRing accepts a key and gives back another one.
type forgetfulRing struct{ set, deleted bool }

func (r *forgetfulRing) Get(string, string) (string, error) {
	if r.set && !r.deleted {
		return base64.StdEncoding.EncodeToString(make([]byte, 32)), nil
	}
	return "", keyring.ErrNotFound
}
func (r *forgetfulRing) Set(string, string, string) error { r.set = true; return nil }
func (r *forgetfulRing) Delete(string, string) error      { r.deleted = true; return nil }
