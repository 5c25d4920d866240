package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/philippgille/chromem-go"
)

// vectors is the chromem-go store: one collection per agent and model, named
// "<agentID>|<model>", so vectors of different models (different lengths and
// spaces) are never compared. The memories table records, per memory, the
// model of its stored vector (embed_model), which is how Reembed finds stale
// ones.
type vectors struct {
	// mu serialises writers against readers: chromem's Delete reads its
	// document map unlocked.
	mu sync.RWMutex
	db *chromem.DB
	// idx mirrors each collection for fast queries (see flat); a collection
	// without one (not indexed at open) is queried through chromem.
	idx map[string]*flat
}

// openVectors opens the persistent store under dir, or an in-memory one when
// dir is "".
func openVectors(dir string) (*vectors, error) {
	if dir == "" {
		return &vectors{db: chromem.NewDB(), idx: map[string]*flat{}}, nil
	}
	db, err := chromem.NewPersistentDB(dir, false)
	if err != nil {
		return nil, fmt.Errorf("open vector store %s: %w", dir, err)
	}
	return &vectors{db: db, idx: map[string]*flat{}}, nil
}

func collectionName(agentID, model string) string { return agentID + "|" + model }

// noEmbed is the collections' embedding function: vectors are always passed in
// (chromem does not persist the function, and we embed in batches ourselves).
func noEmbed(context.Context, string) ([]float32, error) {
	return nil, errors.New("memory: vectors are computed by the Service, not the store")
}

// add stores vectors (one per id) in the agent's collection for model.
func (v *vectors) add(ctx context.Context, agentID, model string, ids []string, vecs [][]float32) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	name := collectionName(agentID, model)
	c, err := v.db.GetOrCreateCollection(name, nil, noEmbed)
	if err != nil {
		return fmt.Errorf("open vector collection: %w", err)
	}
	f := v.idx[name]
	if f == nil && c.Count() == 0 {
		f = newFlat()
		v.idx[name] = f
	}
	docs := make([]chromem.Document, len(ids))
	for i, id := range ids {
		docs[i] = chromem.Document{ID: id, Embedding: vecs[i]}
	}
	if err := c.AddDocuments(ctx, docs, 4); err != nil {
		return fmt.Errorf("store vectors: %w", err)
	}
	if f != nil {
		for i, id := range ids {
			if err := f.put(id, vecs[i]); err != nil {
				delete(v.idx, name) // fall back to chromem
				break
			}
		}
	}
	return nil
}

type vectorHit struct {
	id         string
	similarity float64
}

// query returns up to n memories of the agent nearest to vec, by cosine.
func (v *vectors) query(ctx context.Context, agentID, model string, vec []float32, n int) ([]vectorHit, error) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	name := collectionName(agentID, model)
	if f := v.idx[name]; f != nil {
		hits, err := f.query(vec, n)
		if err != nil {
			return nil, fmt.Errorf("query vectors: %w", err)
		}
		return hits, nil
	}
	c := v.db.GetCollection(name, noEmbed)
	if c == nil {
		return nil, nil
	}
	n = min(n, c.Count()) // chromem refuses nResults > Count
	if n <= 0 {
		return nil, nil
	}
	res, err := c.QueryEmbedding(ctx, vec, n, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("query vectors: %w", err)
	}
	out := make([]vectorHit, len(res))
	for i, r := range res {
		out[i] = vectorHit{r.ID, float64(r.Similarity)}
	}
	return out, nil
}

// remove deletes the memories' vectors from every collection of the agent.
func (v *vectors) remove(ctx context.Context, agentID string, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for name, c := range v.db.ListCollections() {
		if !strings.HasPrefix(name, agentID+"|") {
			continue
		}
		if err := c.Delete(ctx, nil, nil, ids...); err != nil {
			return fmt.Errorf("delete vectors: %w", err)
		}
		if f := v.idx[name]; f != nil {
			for _, id := range ids {
				f.del(id)
			}
		}
	}
	return nil
}

// dropCollections deletes the collections of agentID ("" = every agent) whose
// model is not keep ("" = every model).
func (v *vectors) dropCollections(agentID, keep string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	for name := range v.db.ListCollections() {
		agent, model, _ := strings.Cut(name, "|")
		if (agentID != "" && agent != agentID) || (keep != "" && model == keep) {
			continue
		}
		if err := v.db.DeleteCollection(name); err != nil {
			return fmt.Errorf("drop vector collection: %w", err)
		}
		delete(v.idx, name)
	}
	return nil
}

// index builds the fast index of every collection loaded from disk, from the
// ids lookup says have a vector of that agent and model (memories whose row is
// gone are left out: Recall would skip them anyway).
func (v *vectors) index(ctx context.Context, lookup func(agentID, model string) ([]string, error)) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	for name, c := range v.db.ListCollections() {
		if v.idx[name] != nil {
			continue
		}
		agent, model, _ := strings.Cut(name, "|")
		ids, err := lookup(agent, model)
		if err != nil {
			return err
		}
		f := newFlat()
		ok := true
		for _, id := range ids {
			doc, err := c.GetByID(ctx, id)
			if err != nil {
				continue // no vector stored for it
			}
			if f.put(id, doc.Embedding) != nil {
				ok = false
				break
			}
		}
		if ok {
			v.idx[name] = f
		}
	}
	return nil
}
