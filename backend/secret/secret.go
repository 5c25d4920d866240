// Package secret seals small secrets (API keys entered in the app) with
// AES-256-GCM under a random key kept in a file beside them, readable only by
// the user. It keeps secrets out of plain-text files and databases that get
// copied or synced; it does not defend against someone who can read the user's
// files (an OS keychain would be the next step).
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

// Box seals and opens secrets with one key.
type Box struct {
	aead cipher.AEAD
}

// OpenBox loads the key at keyPath, creating it (0600) on first use.
func OpenBox(keyPath string) (*Box, error) {
	key, err := os.ReadFile(keyPath)
	if errors.Is(err, os.ErrNotExist) {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("make secret key: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(keyPath), 0o700); err != nil {
			return nil, fmt.Errorf("make secret key: %w", err)
		}
		f, err := os.OpenFile(keyPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("write secret key: %w", err)
		}
		_, werr := f.Write(key)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, fmt.Errorf("write secret key: %w", werr)
		}
	} else if err != nil {
		return nil, fmt.Errorf("read secret key: %w", err)
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("secret key %s is %d bytes, want 32; move it away to start over (saved keys are then lost)", keyPath, len(key))
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

// Seal encrypts plain; label binds the ciphertext to its use (e.g. the
// provider name) so it cannot be swapped for another sealed value.
func (b *Box) Seal(plain, label string) string {
	nonce := make([]byte, b.aead.NonceSize())
	rand.Read(nonce)
	return base64.StdEncoding.EncodeToString(b.aead.Seal(nonce, nonce, []byte(plain), []byte(label)))
}

// Open decrypts what Seal returned for the same label.
func (b *Box) Open(sealed, label string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil || len(raw) < b.aead.NonceSize() {
		return "", errors.New("sealed secret is malformed")
	}
	n := b.aead.NonceSize()
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], []byte(label))
	if err != nil {
		return "", errors.New("sealed secret does not open with this key (was the key file replaced?)")
	}
	return string(plain), nil
}
