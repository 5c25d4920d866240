package relay

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// Errors of pairing a phone.
var (
	ErrExpired = errors.New("expired")
	ErrUsed    = errors.New("already used")
)

// PhoneRecord is a paired phone as the store keeps it.
type PhoneRecord struct {
	ID, WorkspaceID string
	Verifier        string // protocol.Verifier(the phone's secret)
	Name            string
	Subscription    protocol.Subscription
	PairedAt        time.Time
	LastPushAt      time.Time // zero before the first push
	LastError       string
}

// Info is the phone as the desktop's list shows it.
func (p PhoneRecord) Info() protocol.Phone {
	out := protocol.Phone{ID: p.ID, Name: p.Name, PairedAt: p.PairedAt, LastError: p.LastError}
	if !p.LastPushAt.IsZero() {
		t := p.LastPushAt
		out.LastPushAt = &t
	}
	return out
}

// phoneStore is the part of the Store that keeps phones.
type phoneStore interface {
	// AddPairing keeps a pairing token's hash until expires (and forgets
	// pairings that ended a day ago).
	AddPairing(ctx context.Context, workspaceID, hash string, expires, now time.Time) error
	// Pair spends the pairing token of hash (once, before it expires) and
	// keeps p. ErrNotFound: no such token for the workspace; ErrExpired,
	// ErrUsed; ErrConflict: the workspace has MaxPhones phones.
	Pair(ctx context.Context, hash string, p PhoneRecord) error
	Phones(ctx context.Context, workspaceID string) ([]PhoneRecord, error)
	// Phone returns ErrNotFound for an unknown id.
	Phone(ctx context.Context, id string) (PhoneRecord, error)
	DeletePhone(ctx context.Context, workspaceID, id string) error
	SetSubscription(ctx context.Context, id string, sub protocol.Subscription) error
	// PushDone records a push to a phone: when, and the push service's
	// refusal ("" when it took it).
	PushDone(ctx context.Context, id string, at time.Time, failure string) error
	// RelayKey returns the relay's key name, keeping make() the first time
	// (one value even when several processes race).
	RelayKey(ctx context.Context, name string, make func() (string, error)) (string, error)
}

func (s *sqlStore) AddPairing(ctx context.Context, workspaceID, hash string, expires, now time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM phone_pairings WHERE expires_at < ?`), ms(now.Add(-24*time.Hour))); err != nil {
			return fmt.Errorf("forget old pairings: %w", err)
		}
		_, err := tx.ExecContext(ctx, s.q(`INSERT INTO phone_pairings (hash, workspace_id, expires_at) VALUES (?, ?, ?)`),
			hash, workspaceID, ms(expires))
		if err != nil {
			return fmt.Errorf("keep pairing: %w", err)
		}
		return nil
	})
}

func (s *sqlStore) Pair(ctx context.Context, hash string, p PhoneRecord) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var expires int64
		var used sql.NullInt64
		err := tx.QueryRowContext(ctx, s.q(`SELECT expires_at, used_at FROM phone_pairings WHERE hash = ? AND workspace_id = ?`),
			hash, p.WorkspaceID).Scan(&expires, &used)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return ErrNotFound
		case err != nil:
			return fmt.Errorf("read pairing: %w", err)
		case used.Valid:
			return ErrUsed
		case ms(p.PairedAt) > expires:
			return ErrExpired
		}
		// Spent even if another transaction raced here: only one sets it.
		res, err := tx.ExecContext(ctx, s.q(`UPDATE phone_pairings SET used_at = ? WHERE hash = ? AND used_at IS NULL`), ms(p.PairedAt), hash)
		if err != nil {
			return fmt.Errorf("spend pairing: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrUsed
		}
		var count int
		if err := tx.QueryRowContext(ctx, s.q(`SELECT count(*) FROM phones WHERE workspace_id = ?`), p.WorkspaceID).Scan(&count); err != nil {
			return fmt.Errorf("count phones: %w", err)
		}
		if count >= protocol.MaxPhones {
			return ErrConflict
		}
		_, err = tx.ExecContext(ctx, s.q(`INSERT INTO phones (id, workspace_id, verifier, name, endpoint, p256dh, auth, paired_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`), p.ID, p.WorkspaceID, p.Verifier, p.Name,
			p.Subscription.Endpoint, p.Subscription.Keys.P256dh, p.Subscription.Keys.Auth, ms(p.PairedAt))
		if err != nil {
			return fmt.Errorf("keep phone: %w", err)
		}
		return nil
	})
}

const phoneColumns = `id, workspace_id, verifier, name, endpoint, p256dh, auth, paired_at, last_push_at, last_error`

func scanPhone(r interface{ Scan(...any) error }) (PhoneRecord, error) {
	var p PhoneRecord
	var paired int64
	var last sql.NullInt64
	err := r.Scan(&p.ID, &p.WorkspaceID, &p.Verifier, &p.Name, &p.Subscription.Endpoint, &p.Subscription.Keys.P256dh,
		&p.Subscription.Keys.Auth, &paired, &last, &p.LastError)
	p.PairedAt = fromMS(paired)
	if last.Valid {
		p.LastPushAt = fromMS(last.Int64)
	}
	return p, err
}

func (s *sqlStore) Phones(ctx context.Context, workspaceID string) ([]PhoneRecord, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT `+phoneColumns+` FROM phones WHERE workspace_id = ? ORDER BY paired_at, id`), workspaceID)
	if err != nil {
		return nil, fmt.Errorf("list phones: %w", err)
	}
	defer rows.Close()
	list := []PhoneRecord{}
	for rows.Next() {
		p, err := scanPhone(rows)
		if err != nil {
			return nil, fmt.Errorf("list phones: %w", err)
		}
		list = append(list, p)
	}
	return list, rows.Err()
}

func (s *sqlStore) Phone(ctx context.Context, id string) (PhoneRecord, error) {
	p, err := scanPhone(s.db.QueryRowContext(ctx, s.q(`SELECT `+phoneColumns+` FROM phones WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return PhoneRecord{}, ErrNotFound
	}
	if err != nil {
		return PhoneRecord{}, fmt.Errorf("read phone: %w", err)
	}
	return p, nil
}

func (s *sqlStore) DeletePhone(ctx context.Context, workspaceID, id string) error {
	res, err := s.db.ExecContext(ctx, s.q(`DELETE FROM phones WHERE workspace_id = ? AND id = ?`), workspaceID, id)
	if err != nil {
		return fmt.Errorf("delete phone: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

func (s *sqlStore) SetSubscription(ctx context.Context, id string, sub protocol.Subscription) error {
	res, err := s.db.ExecContext(ctx, s.q(`UPDATE phones SET endpoint = ?, p256dh = ?, auth = ?, last_error = '' WHERE id = ?`),
		sub.Endpoint, sub.Keys.P256dh, sub.Keys.Auth, id)
	if err != nil {
		return fmt.Errorf("keep subscription: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

func (s *sqlStore) PushDone(ctx context.Context, id string, at time.Time, failure string) error {
	_, err := s.db.ExecContext(ctx, s.q(`UPDATE phones SET last_push_at = ?, last_error = ? WHERE id = ?`), ms(at), failure, id)
	if err != nil {
		return fmt.Errorf("record push: %w", err)
	}
	return nil
}

func (s *sqlStore) RelayKey(ctx context.Context, name string, make func() (string, error)) (string, error) {
	var v string
	err := s.db.QueryRowContext(ctx, s.q(`SELECT value FROM relay_keys WHERE name = ?`), name).Scan(&v)
	if err == nil {
		return v, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("read relay key %s: %w", name, err)
	}
	fresh, err := make()
	if err != nil {
		return "", err
	}
	if _, err := s.db.ExecContext(ctx, s.q(`INSERT INTO relay_keys (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`), name, fresh); err != nil {
		return "", fmt.Errorf("keep relay key %s: %w", name, err)
	}
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT value FROM relay_keys WHERE name = ?`), name).Scan(&v); err != nil {
		return "", fmt.Errorf("read relay key %s: %w", name, err)
	}
	return v, nil
}
