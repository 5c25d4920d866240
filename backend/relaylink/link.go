package relaylink

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// relayMetaKey is the meta row that holds a workspace's relay link.
const relayMetaKey = "relay"

// relayLink is what a workspace keeps of its link to a relay. The secret
// (it opens the workspace's queue at the relay) and the sync key (it
// encrypts the change log end to end) are sealed with the home's data key
// in the row; they are opened only into this struct, which no agent, log
// or API answer sees.
type relayLink struct {
	URL         string
	WorkspaceID string // the workspace's id at the relay
	Secret      string
	SyncKey     []byte // 32 bytes
	HookBase    string // + token: a trigger's public URL
	DeviceID    string // this device (replica.Device) when linked
	LinkedAt    time.Time
}

// relayRow is relayLink as stored: the two secrets sealed.
type relayRow struct {
	URL           string    `json:"url"`
	WorkspaceID   string    `json:"workspace_id"`
	SecretSealed  string    `json:"secret_sealed"`
	SyncKeySealed string    `json:"sync_key_sealed"`
	HookBase      string    `json:"hook_base"`
	DeviceID      string    `json:"device_id"`
	LinkedAt      time.Time `json:"linked_at"`
}

// sealLabels bind each sealed value to its use and its workspace, so a
// sealed value cannot be swapped for another.
func sealLabels(ws string) (secretLabel, keyLabel string) {
	return "relay-secret/" + ws, "relay-sync-key/" + ws
}

// newSyncKey returns a fresh 32-byte workspace sync key.
func newSyncKey() []byte {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return k
}

// loadRelayLink reads the workspace's link; nil when it has none.
func loadRelayLink(ctx context.Context, db *store.DB, box *secret.Box, ws string) (*relayLink, error) {
	var raw string
	err := db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, relayMetaKey).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the relay link: %w", err)
	}
	var row relayRow
	if err := json.Unmarshal([]byte(raw), &row); err != nil {
		return nil, fmt.Errorf("read the relay link: %w", err)
	}
	secretLabel, keyLabel := sealLabels(ws)
	sec, err := box.Open(row.SecretSealed, secretLabel)
	if err != nil {
		return nil, fmt.Errorf("open the relay secret: %w; unlink the workspace and link it again (Settings → Relay)", err)
	}
	enc, err := box.Open(row.SyncKeySealed, keyLabel)
	if err != nil {
		return nil, fmt.Errorf("open the sync key: %w; unlink the workspace and link it again (Settings → Relay)", err)
	}
	key, err := base64.StdEncoding.DecodeString(enc)
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("open the sync key: it is not 32 bytes; unlink the workspace and link it again (Settings → Relay)")
	}
	return &relayLink{URL: row.URL, WorkspaceID: row.WorkspaceID, Secret: sec, SyncKey: key, HookBase: row.HookBase,
		DeviceID: row.DeviceID, LinkedAt: row.LinkedAt}, nil
}

// saveRelayLink writes l, replacing the link there was.
func saveRelayLink(ctx context.Context, db *store.DB, box *secret.Box, ws string, l *relayLink) error {
	secretLabel, keyLabel := sealLabels(ws)
	row := relayRow{URL: l.URL, WorkspaceID: l.WorkspaceID, SecretSealed: box.Seal(l.Secret, secretLabel),
		SyncKeySealed: box.Seal(base64.StdEncoding.EncodeToString(l.SyncKey), keyLabel),
		HookBase:      l.HookBase, DeviceID: l.DeviceID, LinkedAt: l.LinkedAt}
	b, err := json.Marshal(row)
	if err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, relayMetaKey, string(b)); err != nil {
		return fmt.Errorf("save the relay link: %w", err)
	}
	return nil
}

// deleteRelayLink forgets the link.
func deleteRelayLink(ctx context.Context, db *store.DB) error {
	if _, err := db.ExecContext(ctx, `DELETE FROM meta WHERE key = ?`, relayMetaKey); err != nil {
		return fmt.Errorf("forget the relay link: %w", err)
	}
	return nil
}
