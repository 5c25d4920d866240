package llm_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/llm"
)

func loadPrices(t *testing.T, override string) *llm.Prices {
	t.Helper()
	p, err := llm.LoadPrices(override)
	if err != nil {
		t.Fatalf("LoadPrices(%q): %v", override, err)
	}
	return p
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPriceLookup(t *testing.T) {
	p := loadPrices(t, "")
	cases := []struct {
		name, model string
		want        llm.Price
		known       bool
	}{
		{"exact", "gpt-4o", llm.Price{Input: 2.5, Output: 10, CacheRead: 1.25, CacheWrite: 2.5}, true},
		{"exact wins over prefix", "gpt-4o-mini", llm.Price{Input: 0.15, Output: 0.6, CacheRead: 0.075, CacheWrite: 0.15}, true},
		{"dated id by prefix", "claude-sonnet-4-5-20250929", llm.Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}, true},
		{"longest prefix", "gpt-4o-mini-2024-07-18", llm.Price{Input: 0.15, Output: 0.6, CacheRead: 0.075, CacheWrite: 0.15}, true},
		{"longest prefix among family", "claude-opus-4-1-20250805", llm.Price{Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75}, true},
		{"newer opus is cheaper", "claude-opus-4-5-20251101", llm.Price{Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25}, true},
		{"old haiku", "claude-3-5-haiku-20241022", llm.Price{Input: 0.8, Output: 4, CacheRead: 0.08, CacheWrite: 1}, true},
		{"vertex style id", "claude-haiku-4-5@20251001", llm.Price{Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25}, true},
		{"openrouter vendor prefix", "openai/gpt-4.1-mini", llm.Price{Input: 0.4, Output: 1.6, CacheRead: 0.1, CacheWrite: 0.4}, true},
		{"case does not matter", "GPT-5-Mini", llm.Price{Input: 0.25, Output: 2, CacheRead: 0.025, CacheWrite: 0.25}, true},
		{"o-series", "o4-mini-2025-04-16", llm.Price{Input: 1.1, Output: 4.4, CacheRead: 0.275, CacheWrite: 1.1}, true},
		{"prefix needs a dash", "gpt-4.5-preview", llm.Price{}, false},
		{"new version is not guessed", "gpt-5.9", llm.Price{}, false},
		{"local model", "llama3.2", llm.Price{}, false},
		{"ollama tag", "qwen3:8b", llm.Price{}, false},
		{"empty", "", llm.Price{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, known := p.Lookup(tc.model)
			if got != tc.want || known != tc.known {
				t.Errorf("Lookup(%q): got %+v %v, want %+v %v", tc.model, got, known, tc.want, tc.known)
			}
		})
	}
}

func TestPriceCost(t *testing.T) {
	p := loadPrices(t, "")
	u := llm.Usage{InputTokens: 1_000_000, OutputTokens: 100_000, CacheReadTokens: 2_000_000, CacheWriteTokens: 400_000}
	// claude-sonnet-4: 3 + 0.1*15 + 2*0.3 + 0.4*3.75
	usd, known := p.Cost("claude-sonnet-4-20250514", u)
	if want := 3 + 1.5 + 0.6 + 1.5; !known || math.Abs(usd-want) > 1e-9 {
		t.Errorf("Cost: got %v %v, want %v true", usd, known, want)
	}
	usd, known = p.Cost("llama3.2", u)
	if usd != 0 || known {
		t.Errorf("Cost of a local model: got %v %v, want 0 false", usd, known)
	}
	var nilPrices *llm.Prices
	if usd, known := nilPrices.Cost("gpt-4o", u); usd != 0 || known {
		t.Errorf("Cost on nil Prices: got %v %v, want 0 false", usd, known)
	}
}

func TestLoadPricesOverride(t *testing.T) {
	path := writeFile(t, `{
		"models": {
			"gpt-4o": {"input": 1, "output": 2, "cache_read": 0.5, "cache_write": 1},
			"my-finetune": {"input": 4, "output": 8}
		}
	}`)
	p := loadPrices(t, path)
	cases := []struct {
		model string
		want  llm.Price
	}{
		{"gpt-4o", llm.Price{Input: 1, Output: 2, CacheRead: 0.5, CacheWrite: 1}},
		{"gpt-4o-2024-11-20", llm.Price{Input: 1, Output: 2, CacheRead: 0.5, CacheWrite: 1}},
		{"my-finetune", llm.Price{Input: 4, Output: 8, CacheRead: 4, CacheWrite: 4}},
		{"claude-haiku-4-5", llm.Price{Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25}},
	}
	for _, tc := range cases {
		if got, ok := p.Lookup(tc.model); !ok || got != tc.want {
			t.Errorf("Lookup(%q): got %+v %v, want %+v", tc.model, got, ok, tc.want)
		}
	}
}

func TestLoadPricesMissingOverrideFile(t *testing.T) {
	p := loadPrices(t, filepath.Join(t.TempDir(), "absent.json"))
	if _, ok := p.Lookup("gpt-4o"); !ok {
		t.Errorf("Lookup(gpt-4o): got unknown, want the embedded price")
	}
}

func TestLoadPricesBadOverride(t *testing.T) {
	cases := []struct {
		name, content string
		wantIn        []string
	}{
		{"syntax", "{\n  \"models\": {\n    \"gpt-4o\": {\"input\": 1,, \"output\": 2}\n  }\n}", []string{"invalid JSON", "line 3"}},
		{"wrong type", `{"models": {"gpt-4o": {"input": "cheap", "output": 2}}}`, []string{"models.gpt-4o.input", "want a number", "string"}},
		{"unknown field", `{"models": {"gpt-4o": {"inptu": 1, "output": 2}}}`, []string{`unknown field "inptu"`}},
		{"missing output", `{"models": {"gpt-4o": {"input": 1}}}`, []string{"models.gpt-4o.output is missing"}},
		{"negative", `{"models": {"gpt-4o": {"input": 1, "output": -2}}}`, []string{"models.gpt-4o.output", "-2"}},
		{"not an object", `[1, 2]`, []string{"want a JSON object"}},
		{"empty", ``, []string{"empty"}},
		{"trailing data", `{"models": {}} {}`, []string{"after the JSON object"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, tc.content)
			p, err := llm.LoadPrices(path)
			if err == nil {
				t.Fatalf("LoadPrices: got %v, nil error; want an error", p)
			}
			for _, w := range append(tc.wantIn, path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q: want it to contain %q", err, w)
				}
			}
		})
	}
}

func FuzzPricesJSON(f *testing.F) {
	f.Add([]byte(`{"models": {"x": {"input": 1, "output": 2}}}`))
	f.Add([]byte(`{"note": "n", "models": {"gpt-4o": {"input": 1e308, "output": 0, "cache_read": 0, "cache_write": 0}}}`))
	f.Add([]byte(`{"models": {"": {"input": -1}}}`))
	f.Add([]byte(`{"models": null}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "prices.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		p, err := llm.LoadPrices(path)
		if err != nil {
			if p != nil {
				t.Fatalf("LoadPrices: got prices and error %v", err)
			}
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for _, id := range p.Models() {
			pr, ok := p.Lookup(id)
			if !ok {
				t.Fatalf("Lookup(%q) of a listed model: unknown", id)
			}
			for _, v := range []float64{pr.Input, pr.Output, pr.CacheRead, pr.CacheWrite} {
				if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("model %q: invalid price %+v", id, pr)
				}
			}
			if usd, known := p.Cost(id, llm.Usage{InputTokens: 1, OutputTokens: 1}); !known || usd < 0 {
				t.Fatalf("Cost(%q): got %v %v", id, usd, known)
			}
		}
	})
}
