package secret

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/zalando/go-keyring"
)

// KeyStore is where the data key is kept.
type KeyStore string

const (
	KeyStoreKeychain KeyStore = "keychain" // the OS keychain (Keychain, Credential Manager, Secret Service)
	KeyStoreFile     KeyStore = "file"     // <data-dir>/secret.key, mode 0600
)

// keychainService names the app's entries in the OS keychain; the account is
// the absolute data folder, so two data folders keep two keys.
const keychainService = "Rerun Desktop"

// keyFileName is the key file inside the data folder.
const keyFileName = "secret.key"

// keychainTimeout bounds each keychain call: a Secret Service reached over a
// D-Bus session with nobody answering can block forever.
const keychainTimeout = 3 * time.Second

// KeyOptions says where LoadKey may keep the key.
type KeyOptions struct {
	// Keychain allows the OS keychain. False keeps the key in the file only
	// (RERUN_KEYCHAIN=off: headless servers, keychains that prompt).
	Keychain bool

	ring    keyRing       // nil: the OS keychain; tests put a hanging one here
	timeout time.Duration // 0: keychainTimeout
}

// LoadKey returns the data key of dataDir, making it on first use, and says
// where it is kept with a sentence for Settings.
//
// With the keychain allowed: a key in the keychain is used as is. A reachable
// but empty keychain receives the key of an existing secret.key (the file is
// deleted once the keychain gives the same key back) or a new random key. An
// unreachable keychain (an error, or no answer within 3 s) leaves the key in
// secret.key, created if missing.
func LoadKey(dataDir string, o KeyOptions) (key []byte, where KeyStore, note string, err error) {
	dir, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, "", "", fmt.Errorf("load secret key: %w", err)
	}
	path := filepath.Join(dir, keyFileName)
	if !o.Keychain {
		key, err := readOrCreateKeyFile(path)
		if err != nil {
			return nil, "", "", err
		}
		return key, KeyStoreFile, fmt.Sprintf("The OS keychain is not used (RERUN_KEYCHAIN=off), so the key that encrypts your variables is in %s, readable only by you.", path), nil
	}
	kc := keychain{ring: o.ring, timeout: o.timeout, account: dir}
	if kc.ring == nil {
		kc.ring = osKeychain{}
	}
	if kc.timeout <= 0 {
		kc.timeout = keychainTimeout
	}

	key, err = kc.get()
	switch {
	case err == nil:
		// A key file equal to the keychain's is left over from a move whose
		// delete failed. A different one is kept: it may be the only copy of
		// the key some data was sealed with (a keychain write that timed out
		// here but landed later).
		if old, ferr := os.ReadFile(path); ferr == nil && bytes.Equal(old, key) {
			os.Remove(path)
		}
		return key, KeyStoreKeychain, keychainNote, nil
	case errors.Is(err, keyring.ErrNotFound):
		if key, ok := kc.adopt(path); ok {
			return key, KeyStoreKeychain, keychainNote, nil
		}
	case errors.Is(err, errBadKeychainKey):
		return nil, "", "", err
	}
	key, err = readOrCreateKeyFile(path)
	if err != nil {
		return nil, "", "", err
	}
	return key, KeyStoreFile, fmt.Sprintf("No OS keychain was reachable, so the key that encrypts your variables is in %s, readable only by you.", path), nil
}

const keychainNote = "The key that encrypts your variables is in the OS keychain (entry “" + keychainService + "”)."

var errBadKeychainKey = errors.New("the OS keychain entry “" + keychainService + "” does not hold a 32-byte key")

var errKeychainTimeout = errors.New("the OS keychain did not answer")

// keyRing is the part of go-keyring's Keyring that LoadKey uses.
type keyRing interface {
	Get(service, user string) (string, error)
	Set(service, user, password string) error
	Delete(service, user string) error
}

// keychain is the key's entry in one keyring, each call bounded by timeout.
type keychain struct {
	ring    keyRing
	timeout time.Duration
	account string
}

// get reads the key; keyring.ErrNotFound when there is none.
func (k keychain) get() ([]byte, error) {
	s, err := k.call(func() (string, error) { return k.ring.Get(keychainService, k.account) })
	if err != nil {
		return nil, err
	}
	key, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(key) != keySize {
		return nil, fmt.Errorf("%w (account %s); remove the entry to start over (saved variables and keys are then lost)", errBadKeychainKey, k.account)
	}
	return key, nil
}

// adopt puts the key of the file at path, or a new one when there is no
// file, into the empty keychain and reports whether the keychain now holds
// it. The file goes only once the keychain has given the key back.
func (k keychain) adopt(path string) ([]byte, bool) {
	key, err := os.ReadFile(path)
	fromFile := err == nil
	switch {
	case fromFile && len(key) != keySize:
		return nil, false // readOrCreateKeyFile reports it
	case errors.Is(err, os.ErrNotExist):
		if key, err = newKey(); err != nil {
			return nil, false
		}
	case err != nil:
		return nil, false
	}
	if _, err := k.call(func() (string, error) {
		return "", k.ring.Set(keychainService, k.account, base64.StdEncoding.EncodeToString(key))
	}); err != nil {
		return nil, false
	}
	back, err := k.get()
	if err != nil || !bytes.Equal(back, key) {
		// A keychain that does not give back what it took must not keep a
		// key that the next start would prefer over the file.
		k.call(func() (string, error) { return "", k.ring.Delete(keychainService, k.account) })
		return nil, false
	}
	if fromFile {
		// If this fails, the next start finds the same key in both places
		// and removes the file then.
		os.Remove(path)
	}
	return key, true
}

// call runs f in a goroutine and gives up after k.timeout; a call that never
// returns leaks its goroutine, which is the price of not hanging the app.
func (k keychain) call(f func() (string, error)) (string, error) {
	type result struct {
		s   string
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := f()
		done <- result{s, err}
	}()
	t := time.NewTimer(k.timeout)
	defer t.Stop()
	select {
	case r := <-done:
		return r.s, r.err
	case <-t.C:
		return "", errKeychainTimeout
	}
}

// osKeychain is the OS keychain as go-keyring reaches it (or its mock, after
// keyring.MockInit).
type osKeychain struct{}

func (osKeychain) Get(service, user string) (string, error) { return keyring.Get(service, user) }
func (osKeychain) Set(service, user, pass string) error     { return keyring.Set(service, user, pass) }
func (osKeychain) Delete(service, user string) error        { return keyring.Delete(service, user) }
