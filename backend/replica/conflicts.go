package replica

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/agent"
)

// A resolver settles a row that broke a unique index because two devices
// made their own rows with one name while apart. Every device settles it
// the same way: the row with the smaller id keeps the name, the other gets
// the name marked with the last four characters of its id. It renames the
// local row, or returns the incoming row renamed.
type resolver func(ctx context.Context, tx *sql.Tx, row map[string]json.RawMessage, raw string) (string, error)

// uniqueResolver is the resolver of the unique index that err names on
// table, or nil when err is not such a conflict.
func uniqueResolver(table string, err error) resolver {
	if err == nil || !strings.Contains(err.Error(), "UNIQUE") {
		return nil
	}
	switch msg := err.Error(); {
	case table == "agents" && strings.Contains(msg, "agents.handle"):
		return resolveHandle
	case table == "brain_pages" && (strings.Contains(msg, "brain_pages.title_key") || strings.Contains(msg, "brain_pages.slug")):
		return resolveTitle
	}
	return nil
}

// idSuffix is the mark of a renamed row: its id's last four characters.
func idSuffix(id string) string { return strings.ToLower(id[max(0, len(id)-4):]) }

// resolveHandle settles two agents with one @handle.
func resolveHandle(ctx context.Context, tx *sql.Tx, row map[string]json.RawMessage, raw string) (string, error) {
	var id, handle string
	if json.Unmarshal(row["id"], &id) != nil || json.Unmarshal(row["handle"], &handle) != nil {
		return "", errors.New("the agent row has no id or handle")
	}
	var other string
	if err := tx.QueryRowContext(ctx, `SELECT id FROM agents WHERE handle = ? AND id != ?`, handle, id).Scan(&other); err != nil {
		return "", fmt.Errorf("find the agent holding @%s: %w", handle, err)
	}
	if id < other {
		if _, err := tx.ExecContext(ctx, `UPDATE agents SET handle = ? WHERE id = ?`, altHandle(handle, other), other); err != nil {
			return "", err
		}
		return raw, nil
	}
	var fixed string
	err := tx.QueryRowContext(ctx, `SELECT json_set(?, '$.handle', ?)`, raw, altHandle(handle, id)).Scan(&fixed)
	return fixed, err
}

func altHandle(handle, id string) string {
	suffix := idSuffix(id)
	base := handle
	if n := agent.MaxHandleLen - len(suffix) - 1; len(base) > n {
		base = strings.TrimRight(base[:n], "-")
	}
	return base + "-" + suffix
}

// resolveTitle settles two live Brain pages with one title (or one slug):
// "Pricing" and "Pricing (k3x9)", slugs pricing and pricing-k3x9.
func resolveTitle(ctx context.Context, tx *sql.Tx, row map[string]json.RawMessage, raw string) (string, error) {
	var id, titleKey, slug string
	if json.Unmarshal(row["id"], &id) != nil || json.Unmarshal(row["title_key"], &titleKey) != nil || json.Unmarshal(row["slug"], &slug) != nil {
		return "", errors.New("the Brain page row has no id, title or slug")
	}
	var other string
	if err := tx.QueryRowContext(ctx, `SELECT id FROM brain_pages WHERE deleted_at IS NULL AND id != ? AND (title_key = ? OR slug = ?)`,
		id, titleKey, slug).Scan(&other); err != nil {
		return "", fmt.Errorf("find the Brain page holding %q: %w", titleKey, err)
	}
	// The same renaming in SQL for the local row and the incoming one.
	const rename = `title = title || ' (' || ?1 || ')', title_key = lower(title || ' (' || ?1 || ')'), slug = slug || '-' || ?1`
	if id < other {
		_, err := tx.ExecContext(ctx, `UPDATE brain_pages SET `+rename+` WHERE id = ?2`, idSuffix(other), other)
		return raw, err
	}
	var fixed string
	suffix := idSuffix(id)
	err := tx.QueryRowContext(ctx, `SELECT json_set(?1, '$.title', json_extract(?1, '$.title') || ' (' || ?2 || ')',
		'$.title_key', lower(json_extract(?1, '$.title') || ' (' || ?2 || ')'), '$.slug', json_extract(?1, '$.slug') || '-' || ?2)`,
		raw, suffix).Scan(&fixed)
	return fixed, err
}
