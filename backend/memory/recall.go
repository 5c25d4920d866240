package memory

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/store"
)

type keywordHit struct {
	Memory
	bm25 float64 // negative; lower is better
}

// keywordHits runs an FTS5 query over the agent's memories, best first.
//
// The index holds every agent's memories. The first pass takes the best
// firstPass×limit matches of the whole index, ranked inside FTS5 (its own
// top-N sort), and reads only those rows of memories: joining every match
// to its row first, to keep the agent's, read thousands of rows at 100,000
// memories and was most of recall's time. When fewer than limit of the
// first pass are the agent's (other agents' or retired memories crowd
// them out), the query runs again over every match.
func (s *Service) keywordHits(ctx context.Context, agentID, match string, limit int, all bool) ([]keywordHit, error) {
	if match == "" {
		return nil, nil
	}
	state := ` AND m.state = 'active'`
	if all {
		state = ""
	}
	scan := func(sc store.Scanner) (keywordHit, error) {
		var h keywordHit
		m, err := scanMemory(sc, &h.bm25)
		h.Memory = m
		return h, err
	}
	hits, err := store.Query(ctx, s.db, scan, `SELECT `+prefixed("m.", columns)+`, f.rank
		FROM (SELECT rowid, rank FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT ?) AS f
		JOIN memories m ON m.n = f.rowid
		WHERE m.agent_id = ?`+state+`
		ORDER BY f.rank LIMIT ?`, match, firstPass*limit, agentID, limit)
	if err == nil && len(hits) < limit {
		hits, err = store.Query(ctx, s.db, scan, `SELECT `+prefixed("m.", columns)+`, bm25(memories_fts) AS rank
			FROM memories_fts JOIN memories m ON m.n = memories_fts.rowid
			WHERE memories_fts MATCH ? AND m.agent_id = ?`+state+`
			ORDER BY rank LIMIT ?`, match, agentID, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("search memories: %w", err)
	}
	return hits, nil
}

// firstPass is how many matches per wanted hit keywordHits's first pass
// takes from the whole index.
const firstPass = 8

func prefixed(p, cols string) string {
	parts := strings.Split(cols, ",")
	for i, c := range parts {
		parts[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

func (s *Service) byIDs(ctx context.Context, ids []string) ([]Memory, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	ms, err := store.Query(ctx, s.db, func(sc store.Scanner) (Memory, error) { return scanMemory(sc) },
		`SELECT `+columns+` FROM memories WHERE id IN (?`+strings.Repeat(",?", len(ids)-1)+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("read memories: %w", err)
	}
	return ms, nil
}

// Recall returns up to k (default 5, at most 50) active memories of the agent
// relevant to query, best first, and reinforces each one returned: the agent
// asked for them (its recall tool) and reads them.
func (s *Service) Recall(ctx context.Context, agentID, query string, k int) ([]Scored, error) {
	return s.rank(ctx, agentID, query, k, true)
}

// Match is Recall without reinforcing: what a run's prompt is given at its
// start. Being shown is not being used; a memory shown gains strength only
// when the run uses it (Use), so a memory that matches many inputs by its
// words but never helps fades like any other.
func (s *Service) Match(ctx context.Context, agentID, query string, k int) ([]Scored, error) {
	return s.rank(ctx, agentID, query, k, false)
}

// Use reinforces the agent's active memories among ids: a run cited them,
// or the person marked them useful. Ids of other agents' memories, of
// memories no longer active, or unknown, are ignored. It returns the
// memories reinforced.
func (s *Service) Use(ctx context.Context, agentID string, ids ...string) ([]Memory, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	now := s.cfg.Now()
	found, err := s.byIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	var mine []string
	seen := map[string]bool{}
	for _, m := range found {
		if m.AgentID == agentID && s.at(m, now).State == Active && !seen[m.ID] {
			seen[m.ID] = true
			mine = append(mine, m.ID)
		}
	}
	return s.reinforce(ctx, mine, now)
}

func (s *Service) rank(ctx context.Context, agentID, query string, k int, reinforce bool) ([]Scored, error) {
	if k <= 0 {
		k = 5
	}
	k = min(k, 50)
	now := s.cfg.Now()
	pool := max(4*k, 20)
	kw, err := s.keywordHits(ctx, agentID, MatchQuery(query), pool, false)
	if err != nil {
		return nil, err
	}
	cands := map[string]*Scored{}
	var best float64
	for _, h := range kw {
		best = min(best, h.bm25)
	}
	for _, h := range kw {
		sc := &Scored{Memory: h.Memory}
		if best < 0 {
			sc.Keyword = h.bm25 / best
		}
		cands[h.ID] = sc
	}
	meaning := false
	if s.vec != nil && strings.TrimSpace(query) != "" {
		hits, err := s.queryVectors(ctx, agentID, query, pool)
		if err != nil {
			s.cfg.Logger.Warn("recall by meaning; using keywords only", "agent", agentID, "err", err)
		} else {
			meaning = true
			var missing []string
			for _, h := range hits {
				if c, ok := cands[h.id]; ok {
					c.Meaning = max(0, h.similarity)
				} else if h.similarity >= s.cfg.MinSimilarity {
					missing = append(missing, h.id)
					cands[h.id] = &Scored{Meaning: h.similarity}
				}
			}
			more, err := s.byIDs(ctx, missing)
			if err != nil {
				return nil, err
			}
			for _, m := range more {
				cands[m.ID].Memory = m
			}
		}
	}
	var ranked []Scored
	model := s.modelName()
	for _, c := range cands {
		if c.ID == "" { // vector of a deleted memory
			continue
		}
		c.Memory = s.at(c.Memory, now)
		if c.State != Active {
			continue
		}
		if c.embedModel != model {
			c.Meaning = 0
		}
		if c.Keyword == 0 && c.Meaning < s.cfg.MinSimilarity {
			continue
		}
		if meaning {
			c.Score = 0.5*c.Meaning + 0.3*c.Keyword + 0.2*c.Strength
		} else {
			c.Score = 0.8*c.Keyword + 0.2*c.Strength
		}
		ranked = append(ranked, *c)
	}
	sort.Slice(ranked, func(i, j int) bool {
		if ranked[i].Score != ranked[j].Score {
			return ranked[i].Score > ranked[j].Score
		}
		return ranked[i].ID < ranked[j].ID
	})
	if len(ranked) > k {
		ranked = ranked[:k]
	}
	if !reinforce {
		return ranked, nil
	}
	ids := make([]string, len(ranked))
	for i, r := range ranked {
		ids[i] = r.ID
	}
	fresh, err := s.reinforce(ctx, ids, now)
	if err != nil {
		return nil, err
	}
	for i := range ranked {
		ranked[i].Memory = fresh[i]
	}
	return ranked, nil
}

func (s *Service) queryVectors(ctx context.Context, agentID, query string, n int) ([]vectorHit, error) {
	vs, err := s.cfg.Embedder.Embed(ctx, []string{query})
	if err != nil {
		return nil, err
	}
	return s.vec.query(ctx, agentID, s.cfg.Embedder.Model(), vs[0], n)
}

// reinforce records a recall of each memory at now and returns them updated,
// in the order given.
func (s *Service) reinforce(ctx context.Context, ids []string, now time.Time) ([]Memory, error) {
	out := make([]Memory, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	t := store.FormatTime(now)
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		// One read of all of them, then one prepared update each.
		rows, err := tx.QueryContext(ctx, `SELECT `+columns+` FROM memories WHERE id IN (?`+strings.Repeat(",?", len(ids)-1)+`)`, args...)
		if err != nil {
			return err
		}
		byID := make(map[string]Memory, len(ids))
		for rows.Next() {
			m, err := scanMemory(rows)
			if err != nil {
				rows.Close()
				return err
			}
			byID[m.ID] = m
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		upd, err := tx.PrepareContext(ctx, `UPDATE memories SET strength = ?, recalls = ?, reinforced_at = ?,
			last_recalled_at = ? WHERE id = ?`)
		if err != nil {
			return err
		}
		defer upd.Close()
		for i, id := range ids {
			m, ok := byID[id]
			if !ok {
				return fmt.Errorf("read memory %s: %w", id, sql.ErrNoRows)
			}
			m.stored = s.cfg.reinforce(s.cfg.Strength(m.stored, m.Recalls, m.reinforcedAt, now))
			m.Recalls++
			m.reinforcedAt, m.LastRecalledAt = now, &now
			if _, err := upd.ExecContext(ctx, m.stored, m.Recalls, t, t, id); err != nil {
				return err
			}
			byID[id] = m // a repeated id is reinforced twice, as before
			out[i] = s.at(m, now)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reinforce memories: %w", err)
	}
	return out, nil
}
