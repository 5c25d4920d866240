package memory

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Arrived brings this device's vector index in line with a memory another
// device wrote. Memories travel between devices as text, never as vectors
// (the other device may embed with another model, or not at all): an
// active memory that is new here, whose text changed, or that has no
// vector of this device's model is embedded now, together with any other
// stale ones (Reembed); a deleted, retired or superseded one leaves the
// index. Keyword recall needs nothing: its index follows the row. With
// embed false the memory is only marked for embedding, which Reembed does
// later (the embedder is slow or down).
func (s *Service) Arrived(ctx context.Context, agentID, id string, textChanged, embed bool) error {
	if s.vec == nil {
		return nil
	}
	var state, model string
	err := s.db.QueryRowContext(ctx, `SELECT state, embed_model FROM memories WHERE id = ? AND agent_id = ?`, id, agentID).Scan(&state, &model)
	if errors.Is(err, sql.ErrNoRows) {
		return s.dropVectors(ctx, agentID, id)
	}
	if err != nil {
		return fmt.Errorf("read arrived memory %s: %w", id, err)
	}
	if State(state) != Active {
		return s.dropVectors(ctx, agentID, id)
	}
	current := s.modelName()
	if !textChanged && model == current && s.vec.has(ctx, agentID, current, id) {
		return nil
	}
	if model != "" {
		// The row's model column is this device's own (sync leaves it): it
		// still names the vector of the old text, or of none.
		if _, err := s.db.ExecContext(ctx, `UPDATE memories SET embed_model = '' WHERE id = ?`, id); err != nil {
			return fmt.Errorf("mark memory %s for embedding: %w", id, err)
		}
	}
	if err := s.dropVectors(ctx, agentID, id); err != nil {
		return err
	}
	if !embed {
		return nil
	}
	return s.Reembed(ctx, nil)
}

// Indexed reports whether the memory has a vector of this device's model:
// whether it can be recalled by meaning here.
func (s *Service) Indexed(ctx context.Context, agentID, id string) bool {
	return s.vec != nil && s.vec.has(ctx, agentID, s.modelName(), id)
}

// has reports whether the agent's collection for model holds id.
func (v *vectors) has(ctx context.Context, agentID, model, id string) bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	c := v.db.GetCollection(collectionName(agentID, model), noEmbed)
	if c == nil {
		return false
	}
	_, err := c.GetByID(ctx, id)
	return err == nil
}
