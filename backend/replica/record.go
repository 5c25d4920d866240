package replica

import (
	"bytes"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"golang.org/x/crypto/chacha20poly1305"
)

// KeySize is the length of the workspace's sync key.
const KeySize = 32

// MaxBody is the largest sealed record the relay takes.
const MaxBody = 1 << 20

// bodyVersion is the first byte of every sealed body.
const bodyVersion = 1

// Record is one synced row as it travels, before sealing: which row, when
// and by whom it was written, and its synced columns (nil for a tombstone).
type Record struct {
	Table   string          `json:"table"`
	PK      string          `json:"pk"` // JSON array of the key columns' values
	HLC     string          `json:"hlc"`
	Device  string          `json:"device"`
	Deleted bool            `json:"deleted,omitempty"`
	Row     json.RawMessage `json:"row,omitempty"`
	// Files ride with a table that has a Folder: slash path → content.
	// FilesOmitted says they were too large to carry.
	Files        map[string][]byte `json:"files,omitempty"`
	FilesOmitted bool              `json:"files_omitted,omitempty"`
}

// keys are the two keys derived from the workspace's sync key: one names
// records (Key), one seals them (Body).
type keys struct {
	mac  []byte
	aead interface {
		Seal(dst, nonce, plaintext, additionalData []byte) []byte
		Open(dst, nonce, ciphertext, additionalData []byte) ([]byte, error)
		NonceSize() int
		Overhead() int
	}
	workspace string
}

// deriveKeys derives the MAC and encryption keys (HKDF-SHA256, distinct
// labels) from the 32-byte sync key.
func deriveKeys(secret []byte, workspace string) (*keys, error) {
	if len(secret) != KeySize {
		return nil, fmt.Errorf("the sync key is %d bytes; it must be %d", len(secret), KeySize)
	}
	mac, err := hkdf.Key(sha256.New, secret, nil, "rerun replica record name v1", 32)
	if err != nil {
		return nil, err
	}
	enc, err := hkdf.Key(sha256.New, secret, nil, "rerun replica record seal v1", chacha20poly1305.KeySize)
	if err != nil {
		return nil, err
	}
	aead, err := chacha20poly1305.NewX(enc)
	if err != nil {
		return nil, err
	}
	return &keys{mac: mac, aead: aead, workspace: workspace}, nil
}

// name is the relay's key of a record: the relay learns neither the table
// nor the row's id.
func (k *keys) name(table, pk string) string {
	m := hmac.New(sha256.New, k.mac)
	m.Write([]byte(table))
	m.Write([]byte{0})
	m.Write([]byte(pk))
	return hex.EncodeToString(m.Sum(nil))
}

func (k *keys) aad(name string) []byte { return []byte(k.workspace + "\x00" + name) }

// seal encodes and encrypts r; it returns the record's key and body.
func (k *keys) seal(r Record) (name string, body []byte, err error) {
	plain, err := json.Marshal(r)
	if err != nil {
		return "", nil, fmt.Errorf("encode record: %w", err)
	}
	name = k.name(r.Table, r.PK)
	nonce := make([]byte, k.aead.NonceSize(), 1+k.aead.NonceSize()+len(plain)+k.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", nil, err
	}
	body = append([]byte{bodyVersion}, nonce...)
	body = k.aead.Seal(body, nonce, plain, k.aad(name))
	return name, body, nil
}

// errRefused is a body that does not open with this workspace's key: it is
// logged and skipped, never applied.
var errRefused = errors.New("record refused")

// open decrypts and checks a body stored under name: it must have been
// sealed for this workspace under this name, and name the row it holds.
func (k *keys) open(name string, body []byte) (Record, error) {
	n := k.aead.NonceSize()
	if len(body) < 1+n+k.aead.Overhead() || body[0] != bodyVersion {
		return Record{}, fmt.Errorf("%w: not a sealed record", errRefused)
	}
	plain, err := k.aead.Open(nil, body[1:1+n], body[1+n:], k.aad(name))
	if err != nil {
		return Record{}, fmt.Errorf("%w: it does not open with this workspace's key", errRefused)
	}
	var r Record
	dec := json.NewDecoder(bytes.NewReader(plain))
	if err := dec.Decode(&r); err != nil {
		return Record{}, fmt.Errorf("%w: %v", errRefused, err)
	}
	if err := r.check(); err != nil {
		return Record{}, fmt.Errorf("%w: %v", errRefused, err)
	}
	if !hmac.Equal([]byte(k.name(r.Table, r.PK)), []byte(name)) {
		return Record{}, fmt.Errorf("%w: it names another row than its key", errRefused)
	}
	return r, nil
}

// check validates what a record says about itself.
func (r Record) check() error {
	if r.Table == "" || r.Device == "" {
		return errors.New("no table or device")
	}
	if _, err := ParseHLC(r.HLC); err != nil {
		return err
	}
	var pk []any
	if err := json.Unmarshal([]byte(r.PK), &pk); err != nil || len(pk) == 0 {
		return errors.New("its key is not a JSON array")
	}
	if !r.Deleted {
		var row map[string]any
		if err := json.Unmarshal(r.Row, &row); err != nil || row == nil {
			return errors.New("its row is not a JSON object")
		}
	}
	return nil
}

// newer reports whether (hlc, device) a is later than b.
func newer(aHLC, aDevice, bHLC, bDevice string) bool {
	if aHLC != bHLC {
		return aHLC > bHLC // fixed-width: text order is clock order
	}
	return aDevice > bDevice
}
