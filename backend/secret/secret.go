// Package secret owns the secrets of this computer and of each workspace.
//
// It keeps the data key (32 random bytes in the OS keychain, or in a 0600 file
// <data-dir>/secret.key when no keychain is reachable) and seals small secrets
// with it (AES-256-GCM, bound to a label so a sealed value cannot be moved to
// another use). On top of that it owns the workspace's secret variables: their
// table, the ${NAME} references that agents write instead of the values, and
// the masking of those values, in their common encodings, in everything that
// leaves a run (tool outputs, logs).
//
// Sealing keeps values out of databases and files that get copied or synced;
// it does not defend against someone who can act as the user.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// keySize is the length of the data key: AES-256.
const keySize = 32

// ErrWrongKey says a sealed value does not open with the key at hand: the key
// was replaced, or the value was sealed on another computer or for another
// label.
var ErrWrongKey = errors.New("sealed secret does not open with this key")

// Box seals and opens secrets with one key.
type Box struct {
	aead cipher.AEAD
}

// NewBox returns a Box for a 32-byte key (see LoadKey).
func NewBox(key []byte) (*Box, error) {
	if len(key) != keySize {
		return nil, fmt.Errorf("secret key is %d bytes, want %d", len(key), keySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// OpenBox loads the key at keyPath, creating it (0600) on first use.
func OpenBox(keyPath string) (*Box, error) {
	key, err := readOrCreateKeyFile(keyPath)
	if err != nil {
		return nil, err
	}
	return NewBox(key)
}

// readOrCreateKeyFile returns the key in the file at path, first writing a new
// random one (0600, in a 0700 folder) when there is no file.
func readOrCreateKeyFile(path string) ([]byte, error) {
	key, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		key, err = newKey()
		if err != nil {
			return nil, err
		}
		if err := writeKeyFile(path, key); err != nil {
			return nil, err
		}
		return key, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read secret key: %w", err)
	}
	if len(key) != keySize {
		return nil, fmt.Errorf("secret key %s is %d bytes, want %d; move it away to start over (saved keys are then lost)", path, len(key), keySize)
	}
	return key, nil
}

func newKey() ([]byte, error) {
	key := make([]byte, keySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("make secret key: %w", err)
	}
	return key, nil
}

// writeKeyFile creates path with key, failing if it exists: two processes
// racing to create a key must not both win.
func writeKeyFile(path string, key []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("make secret key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write secret key: %w", err)
	}
	_, werr := f.Write(key)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("write secret key: %w", werr)
	}
	return nil
}

// Seal encrypts plain; label binds the ciphertext to its use (e.g. the
// provider name) so it cannot be swapped for another sealed value.
func (b *Box) Seal(plain, label string) string {
	nonce := make([]byte, b.aead.NonceSize())
	rand.Read(nonce)
	return base64.StdEncoding.EncodeToString(b.aead.Seal(nonce, nonce, []byte(plain), []byte(label)))
}

// Open decrypts what Seal returned for the same label. A value that does not
// open with this key (or label) is an ErrWrongKey.
func (b *Box) Open(sealed, label string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil || len(raw) < b.aead.NonceSize() {
		return "", errors.New("sealed secret is malformed")
	}
	n := b.aead.NonceSize()
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], []byte(label))
	if err != nil {
		return "", fmt.Errorf("%w (was the key replaced?)", ErrWrongKey)
	}
	return string(plain), nil
}
