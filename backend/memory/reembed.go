package memory

import (
	"context"
	"database/sql"
	"fmt"
)

// reembedBatch is how many texts go in one embeddings request.
const reembedBatch = 64

// Stale counts the active memories without a vector of the current model
// (all of them after the model changed; those whose embedding failed).
func (s *Service) Stale(ctx context.Context) (int, error) {
	if s.vec == nil {
		return 0, nil
	}
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM memories WHERE state = 'active' AND embed_model != ?`,
		s.modelName()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count stale memories: %w", err)
	}
	return n, nil
}

// Reembed embeds every stale active memory with the current model, in batches,
// calling progress (if not nil) after each batch, then drops the vectors of
// other models. It stops at ctx's end or the first failed batch; calling it
// again resumes where it stopped. Recall keeps working meanwhile: memories
// without a current vector are found by keywords.
func (s *Service) Reembed(ctx context.Context, progress func(done, total int)) error {
	if s.vec == nil {
		return nil
	}
	total, err := s.Stale(ctx)
	if err != nil {
		return err
	}
	model := s.modelName()
	done := 0
	last := int64(0) // n of the last row handled: rows that keep failing are not retried in a loop
	for {
		type row struct {
			n                 int64
			id, agentID, text string
		}
		rows, err := func() ([]row, error) {
			rs, err := s.db.QueryContext(ctx, `SELECT n, id, agent_id, text FROM memories
				WHERE state = 'active' AND embed_model != ? AND n > ? ORDER BY n LIMIT ?`, model, last, reembedBatch)
			if err != nil {
				return nil, err
			}
			defer rs.Close()
			var out []row
			for rs.Next() {
				var r row
				if err := rs.Scan(&r.n, &r.id, &r.agentID, &r.text); err != nil {
					return nil, err
				}
				out = append(out, r)
			}
			return out, rs.Err()
		}()
		if err != nil {
			return fmt.Errorf("re-embed memories: %w", err)
		}
		if len(rows) == 0 {
			break
		}
		texts := make([]string, len(rows))
		for i, r := range rows {
			texts[i] = r.text
		}
		vecs, err := s.cfg.Embedder.Embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("re-embed memories (%d of %d done): %w", done, total, err)
		}
		byAgent := map[string][]int{}
		for i, r := range rows {
			byAgent[r.agentID] = append(byAgent[r.agentID], i)
		}
		for agent, idx := range byAgent {
			ids := make([]string, len(idx))
			vs := make([][]float32, len(idx))
			for j, i := range idx {
				ids[j], vs[j] = rows[i].id, vecs[i]
			}
			if err := s.vec.add(ctx, agent, model, ids, vs); err != nil {
				return fmt.Errorf("re-embed memories (%d of %d done): %w", done, total, err)
			}
		}
		err = s.db.Tx(ctx, func(tx *sql.Tx) error {
			for _, r := range rows {
				// Only if the text is still the one embedded (Update may have raced).
				if _, err := tx.ExecContext(ctx, `UPDATE memories SET embed_model = ? WHERE id = ? AND text = ?`,
					model, r.id, r.text); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("re-embed memories: %w", err)
		}
		last = rows[len(rows)-1].n
		done += len(rows)
		if progress != nil {
			progress(min(done, total), total)
		}
	}
	return s.vec.dropCollections("", model)
}
