package connector

// Reading an app's tools from its MCP server and pinning their definitions:
// a tool whose definition changed after the person approved it waits for
// their approval again.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rerun-build/rerun-desktop/backend/store"
)

// list reads the server's tools into c.
func (s *Service) list(ctx context.Context, c *conn) error {
	res, err := c.client.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return fmt.Errorf("list tools: %w", err)
	}
	tools := map[string]liveTool{}
	for _, t := range res.Tools {
		def, hash, err := definitionOf(t)
		if err != nil {
			return fmt.Errorf("tool %q: %w", t.Name, err)
		}
		tools[t.Name] = liveTool{def, hash}
	}
	c.mu.Lock()
	c.tools, c.stale = tools, false
	c.mu.Unlock()
	return nil
}

// relist refreshes an open session's tools and records them.
func (s *Service) relist(ctx context.Context, id string, c *conn) error {
	cctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout)
	defer cancel()
	if err := s.list(cctx, c); err != nil {
		return err
	}
	cn, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	return s.record(ctx, cn, c)
}

// definitionOf is what is pinned of a tool, and its hash: SHA-256 of the
// canonical JSON of name, description and input schema (keys sorted,
// numbers as written), so only a real change changes it.
func definitionOf(t mcp.Tool) (Definition, string, error) {
	raw, err := json.Marshal(t)
	if err != nil {
		return Definition{}, "", err
	}
	var fields struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(raw, &fields); err != nil {
		return Definition{}, "", err
	}
	schema, err := canonicalJSON(fields.InputSchema)
	if err != nil {
		return Definition{}, "", fmt.Errorf("input schema: %w", err)
	}
	d := Definition{Name: t.Name, Description: t.Description, InputSchema: schema}
	b, err := canonicalJSON(mustJSON(d))
	if err != nil {
		return Definition{}, "", err
	}
	sum := sha256.Sum256(b)
	return d, hex.EncodeToString(sum[:]), nil
}

// canonicalJSON re-encodes a JSON value with object keys sorted, numbers
// kept as written and no HTML escaping; empty input is {}.
func canonicalJSON(raw json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return json.RawMessage(`{}`), nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), nil
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain values are encoded here
	}
	return b
}

// record stores what a connection listed: the live definitions, the first
// pin of an app never approved (trust on first use: the person set it up
// moments ago), and the status that follows.
func (s *Service) record(ctx context.Context, cn Connector, c *conn) error {
	c.mu.Lock()
	live := c.tools
	c.mu.Unlock()
	now := store.FormatTime(s.now())
	status := StatusConnected
	changed := false
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var pinnedAt sql.NullString
		var was, wasErr string
		if err := tx.QueryRowContext(ctx, `SELECT pinned_at, status, error FROM connectors WHERE id = ?`, cn.ID).Scan(&pinnedAt, &was, &wasErr); err != nil {
			return err
		}
		before := map[string]string{}
		rows, err := tx.QueryContext(ctx, `SELECT name, live_hash FROM connector_tools WHERE connector_id = ? AND live_hash != ''`, cn.ID)
		if err != nil {
			return err
		}
		for rows.Next() {
			var n, h string
			if err := rows.Scan(&n, &h); err != nil {
				rows.Close()
				return err
			}
			before[n] = h
		}
		rows.Close()
		changed = len(before) != len(live) || !pinnedAt.Valid || wasErr != ""
		for name, t := range live {
			if before[name] != t.hash {
				changed = true
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE connector_tools SET live_hash = '', live = '' WHERE connector_id = ?`, cn.ID); err != nil {
			return err
		}
		for name, t := range live {
			if _, err := tx.ExecContext(ctx, `INSERT INTO connector_tools (connector_id, name, live_hash, live, seen_at) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (connector_id, name) DO UPDATE SET live_hash = excluded.live_hash, live = excluded.live, seen_at = excluded.seen_at`,
				cn.ID, name, t.hash, string(mustJSON(t.def)), now); err != nil {
				return err
			}
		}
		if !pinnedAt.Valid {
			if err := pinAll(ctx, tx, cn.ID, now); err != nil {
				return err
			}
		}
		var blocked int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM connector_tools
			WHERE connector_id = ? AND pinned_hash != '' AND live_hash != '' AND pinned_hash != live_hash`, cn.ID).Scan(&blocked); err != nil {
			return err
		}
		if blocked > 0 {
			status = StatusBlockedChanged
		}
		changed = changed || status != was
		_, err = tx.ExecContext(ctx, `UPDATE connectors SET status = ?, error = '', checked_at = ? WHERE id = ?`, status, now, cn.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("record tools of %s: %w", cn.Name, err)
	}
	if status == StatusBlockedChanged && cn.Status != StatusBlockedChanged {
		s.log.Warn("app changed pinned tool definitions; blocked until approved", "connector", cn.ID, "app", cn.Name, "agent", cn.AgentID)
		if s.onBlocked != nil {
			blockedCn := cn
			blockedCn.Status = status
			s.onBlocked(context.WithoutCancel(ctx), blockedCn)
		}
	}
	// Only news is published: the Apps tab refreshes on it, and may check
	// status again, which must not echo forever.
	if changed {
		cn.Status = status
		s.publish(KindUpdated, cn)
	}
	return nil
}

// pinAll approves the live definitions of every tool and forgets the
// tools the server no longer lists.
func pinAll(ctx context.Context, tx *sql.Tx, id, now string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM connector_tools WHERE connector_id = ? AND live_hash = ''`, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE connector_tools SET pinned_hash = live_hash, pinned = live WHERE connector_id = ?`, id); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE connectors SET pinned_at = ? WHERE id = ?`, now, id)
	return err
}
