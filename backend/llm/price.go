package llm

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
)

// pricesJSON is THE price table; edit it when providers change prices.
//
//go:embed prices.json
var pricesJSON []byte

// Price is what a model costs, in USD per million tokens.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read"`
	CacheWrite float64 `json:"cache_write"`
}

// Prices turns usage into cost. Build it with LoadPrices; a nil *Prices
// knows no model.
type Prices struct {
	models map[string]Price // by lower-case model id
}

// priceEntry is one model in prices.json or a user's override file:
// {"note": "…", "models": {"<id>": priceEntry}}. Pointers tell a missing
// field from a zero price.
type priceEntry struct {
	Input      *float64 `json:"input"`
	Output     *float64 `json:"output"`
	CacheRead  *float64 `json:"cache_read"`
	CacheWrite *float64 `json:"cache_write"`
}

// LoadPrices returns the embedded price table with the models of the file at
// overridePath (same JSON shape) laid over it, entry by entry. An empty path
// or a file that does not exist means no override. In an entry, input and
// output are required; cache_read and cache_write default to the input
// price.
func LoadPrices(overridePath string) (*Prices, error) {
	p := &Prices{models: map[string]Price{}}
	if err := p.merge(pricesJSON, "embedded prices.json"); err != nil {
		return nil, err
	}
	if overridePath == "" {
		return p, nil
	}
	data, err := os.ReadFile(overridePath)
	if errors.Is(err, os.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read price file: %w", err)
	}
	if err := p.merge(data, overridePath); err != nil {
		return nil, err
	}
	return p, nil
}

// merge parses data and adds its models to p, replacing entries of the same
// id. Nothing is added when data has an error.
func (p *Prices) merge(data []byte, name string) error {
	// Entries are decoded one by one so that an error can name its model
	// (encoding/json leaves map keys out of error field paths).
	var f struct {
		Note   string                     `json:"note"`
		Models map[string]json.RawMessage `json:"models"`
	}
	if err := decodeStrict(data, &f); err != nil {
		return fmt.Errorf("price file %s: %s", name, describeJSONError(data, "", err))
	}
	add := make(map[string]Price, len(f.Models))
	for id, raw := range f.Models {
		at := "models." + id
		if strings.TrimSpace(id) == "" {
			return fmt.Errorf("price file %s: models: empty model id", name)
		}
		var e priceEntry
		if err := decodeStrict(raw, &e); err != nil {
			return fmt.Errorf("price file %s: %s", name, describeJSONError(raw, at, err))
		}
		if e.Input == nil {
			return fmt.Errorf("price file %s: %s.input is missing (USD per million input tokens)", name, at)
		}
		if e.Output == nil {
			return fmt.Errorf("price file %s: %s.output is missing (USD per million output tokens)", name, at)
		}
		pr := Price{Input: *e.Input, Output: *e.Output, CacheRead: *e.Input, CacheWrite: *e.Input}
		if e.CacheRead != nil {
			pr.CacheRead = *e.CacheRead
		}
		if e.CacheWrite != nil {
			pr.CacheWrite = *e.CacheWrite
		}
		for _, v := range []struct {
			field string
			usd   float64
		}{{"input", pr.Input}, {"output", pr.Output}, {"cache_read", pr.CacheRead}, {"cache_write", pr.CacheWrite}} {
			if v.usd < 0 || math.IsNaN(v.usd) || math.IsInf(v.usd, 0) {
				return fmt.Errorf("price file %s: %s.%s is %v; want a price of 0 or more", name, at, v.field, v.usd)
			}
		}
		add[strings.ToLower(strings.TrimSpace(id))] = pr
	}
	for id, pr := range add {
		p.models[id] = pr
	}
	return nil
}

// decodeStrict decodes one JSON value, refusing unknown fields and anything
// after the value.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errTrailing
	}
	return nil
}

var errTrailing = errors.New("unexpected data after the JSON object")

// describeJSONError says where and what the problem in data is; at is the
// path of data in the file ("" for the whole file).
func describeJSONError(data []byte, at string, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	where := func(field string) string {
		switch {
		case at == "":
			return field
		case field == "":
			return at
		}
		return at + "." + field
	}
	switch {
	case errors.Is(err, errTrailing):
		return err.Error()
	case errors.As(err, &se):
		line, col := position(data, se.Offset)
		return fmt.Sprintf("invalid JSON at line %d, column %d: %v", line, col, se)
	case errors.As(err, &te):
		if w := where(te.Field); w != "" {
			return fmt.Sprintf("%s: want %s, got %s", w, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return fmt.Sprintf("want a JSON object, got %s", te.Value)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "the file is empty or ends too early"
	}
	// Unknown fields come as a plain error naming the field.
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if strings.HasPrefix(msg, "unknown field") {
		msg += " (known: note, models; in a model: input, output, cache_read, cache_write)"
	}
	if at != "" {
		msg = at + ": " + msg
	}
	return msg
}

func jsonKind(goKind string) string {
	switch goKind {
	case "float64", "ptr":
		return "a number"
	case "map", "struct":
		return "an object"
	}
	return goKind
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// Lookup finds model's price: by exact id, else by the longest table entry
// that the id extends after a '-' or '@' (so claude-sonnet-4-5-20250929 finds
// claude-sonnet-4-5, or claude-sonnet-4); a "vendor/" prefix as OpenRouter
// writes it is ignored. Case does not matter.
func (p *Prices) Lookup(model string) (Price, bool) {
	if p == nil {
		return Price{}, false
	}
	id := strings.ToLower(strings.TrimSpace(model))
	if id == "" {
		return Price{}, false
	}
	if pr, ok := p.lookup(id); ok {
		return pr, true
	}
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		return p.lookup(id[i+1:])
	}
	return Price{}, false
}

func (p *Prices) lookup(id string) (Price, bool) {
	if pr, ok := p.models[id]; ok {
		return pr, true
	}
	best := ""
	for k := range p.models {
		if len(k) > len(best) && len(id) > len(k) && strings.HasPrefix(id, k) && (id[len(k)] == '-' || id[len(k)] == '@') {
			best = k
		}
	}
	if best == "" {
		return Price{}, false
	}
	return p.models[best], true
}

// Cost is what usage u of model cost in USD. known is false when the model is
// not in the table (local models, new ids): the UI shows "price unknown".
func (p *Prices) Cost(model string, u Usage) (usd float64, known bool) {
	pr, ok := p.Lookup(model)
	if !ok {
		return 0, false
	}
	usd = (float64(u.InputTokens)*pr.Input + float64(u.OutputTokens)*pr.Output +
		float64(u.CacheReadTokens)*pr.CacheRead + float64(u.CacheWriteTokens)*pr.CacheWrite) / 1e6
	return usd, true
}

// Models lists the ids in the table, sorted.
func (p *Prices) Models() []string {
	if p == nil {
		return nil
	}
	ids := make([]string, 0, len(p.models))
	for id := range p.models {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
