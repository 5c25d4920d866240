package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Embedder turns texts into vectors of one model. Recall by meaning is on when
// the Service has one.
type Embedder interface {
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Model names the model; vectors of different models never mix, and a
	// change of model makes every stored vector stale (see Reembed).
	Model() string
}

// OpenAIConfig configures an embeddings client for any OpenAI-compatible
// endpoint: OpenAI itself, Ollama (http://localhost:11434/v1), LM Studio, ….
type OpenAIConfig struct {
	BaseURL string // default https://api.openai.com/v1
	APIKey  string // sent as a bearer token when set; local servers need none
	Model   string // default text-embedding-3-small
	// HTTPClient defaults to a client with a 60 s timeout.
	HTTPClient *http.Client
}

// OpenAI is an Embedder speaking POST {base}/embeddings.
type OpenAI struct {
	cfg OpenAIConfig
}

// NewOpenAI returns an embeddings client; see OpenAIConfig for defaults.
func NewOpenAI(cfg OpenAIConfig) *OpenAI {
	if cfg.BaseURL == "" {
		cfg.BaseURL = "https://api.openai.com/v1"
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.Model == "" {
		cfg.Model = "text-embedding-3-small"
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 60 * time.Second}
	}
	return &OpenAI{cfg: cfg}
}

// Model is the configured model name.
func (o *OpenAI) Model() string { return o.cfg.Model }

type embedRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type embedResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Embed sends the texts in one request.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	body, err := json.Marshal(embedRequest{Model: o.cfg.Model, Input: texts})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.cfg.BaseURL+"/embeddings", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embed with %s: %w", o.cfg.Model, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if o.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.cfg.APIKey)
	}
	resp, err := o.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embed with %s: %w", o.cfg.Model, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("embed with %s: read answer: %w", o.cfg.Model, err)
	}
	var out embedResponse
	jerr := json.Unmarshal(raw, &out)
	if resp.StatusCode != http.StatusOK {
		msg := strings.TrimSpace(string(raw))
		if jerr == nil && out.Error != nil {
			msg = out.Error.Message
		}
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		return nil, fmt.Errorf("embed with %s: the endpoint answered %d: %s", o.cfg.Model, resp.StatusCode, msg)
	}
	if jerr != nil {
		return nil, fmt.Errorf("embed with %s: decode answer: %w", o.cfg.Model, jerr)
	}
	if len(out.Data) != len(texts) {
		return nil, fmt.Errorf("embed with %s: got %d vectors for %d texts", o.cfg.Model, len(out.Data), len(texts))
	}
	sort.Slice(out.Data, func(i, j int) bool { return out.Data[i].Index < out.Data[j].Index })
	vecs := make([][]float32, len(texts))
	for i, d := range out.Data {
		if d.Index != i || len(d.Embedding) == 0 {
			return nil, fmt.Errorf("embed with %s: malformed answer (vector %d)", o.cfg.Model, i)
		}
		vecs[i] = d.Embedding
	}
	return vecs, nil
}
