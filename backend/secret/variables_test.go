package secret

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/store/storetest"
)

func testBox(t testing.TB, seed byte) *Box {
	t.Helper()
	b, err := NewBox(bytes.Repeat([]byte{seed}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVariablesSetValidation(t *testing.T) {
	v, err := NewVariables(storetest.Open(t), testBox(t, 1), "ws1", nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, varName, value string
		errHas               string // "": accepted
	}{
		{"simple", "GITHUB_TOKEN", "ghp_abcdef", ""},
		{"one letter", "A", "abcd", ""},
		{"64 characters", "A" + strings.Repeat("_9", 31) + "Z", "abcd", ""},
		{"64 KiB value", "BIG", strings.Repeat("x", 64<<10), ""},
		{"multi-line value", "PEM", "-----BEGIN-----\nabc\n-----END-----\n", ""},
		{"lowercase", "github_token", "abcd", "is not a valid variable name: use capital letters A–Z, digits and _, starting with a letter, at most 64"},
		{"digit first", "1TOKEN", "abcd", "starting with a letter"},
		{"underscore first", "_TOKEN", "abcd", "starting with a letter"},
		{"dash", "MY-TOKEN", "abcd", "not a valid variable name"},
		{"space", "MY TOKEN", "abcd", "not a valid variable name"},
		{"empty name", "", "abcd", "not a valid variable name"},
		{"65 characters", strings.Repeat("A", 65), "abcd", "at most 64"},
		{"unicode", "TÖKEN", "abcd", "not a valid variable name"},
		{"3-byte value", "SHORT", "abc", "at least 4 bytes (line breaks not counted), because a shorter value cannot be masked reliably"},
		{"empty value", "EMPTY", "", "too short"},
		{"only line breaks", "BREAKS", "\r\n\r\n\n", "too short"},
		{"over 64 KiB", "HUGE", strings.Repeat("x", 64<<10+1), "larger than 64 KiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, err := v.Set(context.Background(), tt.varName, tt.value)
			if tt.errHas == "" {
				if err != nil {
					t.Fatalf("got %v, want it accepted", err)
				}
				if info.Name != tt.varName || info.CreatedAt.IsZero() || !info.UpdatedAt.Equal(info.CreatedAt) {
					t.Errorf("got %+v, want the name and equal times", info)
				}
				if got, ok := v.Lookup(tt.varName); !ok || got != tt.value {
					t.Errorf("Lookup = %.20q, %v; want the value", got, ok)
				}
				return
			}
			if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("got %v, want fault.ErrInvalid containing %q", err, tt.errHas)
			}
			if len(tt.value) >= 3 && strings.Contains(err.Error(), tt.value) {
				t.Errorf("error %q contains the value", err)
			}
			if v.Has(tt.varName) {
				t.Errorf("%q was stored anyway", tt.varName)
			}
		})
	}
}

func TestVariables(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	var bus event.Bus
	changes, stop := bus.Subscribe()
	defer stop()
	v, err := NewVariables(db, testBox(t, 1), "ws1", &bus)
	if err != nil {
		t.Fatal(err)
	}
	expectChange := func(after string) {
		t.Helper()
		select {
		case c := <-changes:
			if c != (event.Change{Workspace: "ws1", Kind: "variables.changed"}) {
				t.Errorf("after %s: change %+v, want variables.changed of ws1", after, c)
			}
		default:
			t.Errorf("after %s: no change published", after)
		}
	}

	first, err := v.Set(ctx, "TOKEN", "first-value")
	if err != nil {
		t.Fatal(err)
	}
	expectChange("set")
	v.Set(ctx, "API_KEY", "key-value-1")
	expectChange("second set")
	time.Sleep(2 * time.Millisecond) // updated_at must move
	second, err := v.Set(ctx, "TOKEN", "second-value")
	if err != nil {
		t.Fatal(err)
	}
	expectChange("replace")
	if !second.CreatedAt.Equal(first.CreatedAt) || !second.UpdatedAt.After(first.UpdatedAt) {
		t.Errorf("replace: created %v updated %v, want created %v kept and updated later", second.CreatedAt, second.UpdatedAt, first.CreatedAt)
	}

	list, err := v.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "API_KEY" || !reflect.DeepEqual(list[1], second) {
		t.Errorf("List = %+v, want API_KEY then %+v", list, second)
	}
	if got := strings.Join(v.Names(), ","); got != "API_KEY,TOKEN" {
		t.Errorf("Names = %s, want API_KEY,TOKEN", got)
	}
	if got, ok := v.Lookup("TOKEN"); !ok || got != "second-value" {
		t.Errorf("Lookup(TOKEN) = %q, %v; want second-value", got, ok)
	}
	if v.Has("token") {
		t.Error("Has(token) = true; names are case-sensitive")
	}
	if got, err := v.Resolve("curl -H 'X: ${API_KEY}' $HOME/${TOKEN}"); err != nil || got != "curl -H 'X: key-value-1' $HOME/second-value" {
		t.Errorf("Resolve = %q, %v", got, err)
	}
	if _, err := v.Resolve("${MISSING}"); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("Resolve(unknown) = %v, want fault.ErrInvalid", err)
	}
	if got := v.Redact("old first-value new second-value"); got != "old first-value new [redacted:TOKEN]" {
		t.Errorf("Redact after replace = %q, want only the current value masked", got)
	}

	if err := v.Delete(ctx, "TOKEN"); err != nil {
		t.Fatal(err)
	}
	expectChange("delete")
	if v.Has("TOKEN") || v.Redact("second-value") != "second-value" {
		t.Error("deleted variable still known or masked")
	}
	if err := v.Delete(ctx, "TOKEN"); !errors.Is(err, fault.ErrNotFound) || !strings.Contains(err.Error(), "no workspace variable named") {
		t.Errorf("delete again = %v, want fault.ErrNotFound", err)
	}
	select {
	case c := <-changes:
		t.Errorf("failed delete published %+v", c)
	default:
	}
	if list, _ := v.List(ctx); len(list) != 1 {
		t.Errorf("List after delete = %+v, want API_KEY only", list)
	}

	js, _ := json.Marshal(list)
	if raw := string(js); strings.Contains(raw, "key-value-1") || !strings.Contains(raw, `"created_at"`) || !strings.Contains(raw, `"updated_at"`) {
		t.Errorf("List as JSON = %s, want names and times, no values", raw)
	}
}

func TestVariablesPersistAndStaySealed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "workspace.db")
	key, _, _, err := LoadKey(dir, KeyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	open := func(key []byte, ws string) (*Variables, *store.DB, error) {
		t.Helper()
		db, err := store.Open(ctx, dbPath, store.WorkspaceMigrations())
		if err != nil {
			t.Fatal(err)
		}
		box, err := NewBox(key)
		if err != nil {
			t.Fatal(err)
		}
		v, err := NewVariables(db, box, ws, nil)
		return v, db, err
	}
	values := map[string]string{
		"GITHUB_TOKEN": "ghp_Zx9CanaryCanaryCanary42",
		"DB_PASSWORD":  "correct horse battery staple",
		"PEM":          "-----BEGIN KEY-----\nMIIcanaryLine\n-----END KEY-----",
	}
	v, db, err := open(key, "ws1")
	if err != nil {
		t.Fatal(err)
	}
	for name, value := range values {
		if _, err := v.Set(ctx, name, value); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	// The database files, and a copy carried off without the key, hold no
	// value, raw or base64.
	files, _ := filepath.Glob(dbPath + "*") // workspace.db, and -wal/-shm if any
	var raw []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		raw = append(raw, b...)
	}
	awayDir := t.TempDir()
	away := filepath.Join(awayDir, "workspace.db")
	mainFile, _ := os.ReadFile(dbPath)
	os.WriteFile(away, mainFile, 0o600)
	for name, value := range values {
		for _, form := range []string{value, base64.StdEncoding.EncodeToString([]byte(value)), "MIIcanaryLine"} {
			if bytes.Contains(raw, []byte(form)) {
				t.Errorf("database files contain %s in the clear (%.12q…)", name, form)
			}
		}
	}
	t.Run("a copy without its key does not open", func(t *testing.T) {
		db, err := store.Open(ctx, away, store.WorkspaceMigrations())
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var n int
		if db.QueryRow(`SELECT count(*) FROM variables`).Scan(&n); n != len(values) {
			t.Fatalf("the copy has %d variables, want %d", n, len(values))
		}
		newKey, _, _, err := LoadKey(awayDir, KeyOptions{}) // no secret.key there: a new one
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewVariables(db, mustBox(t, newKey), "ws1", nil); !errors.Is(err, ErrWrongKey) {
			t.Errorf("got %v, want ErrWrongKey", err)
		}
	})

	t.Run("reopen with the key: values back", func(t *testing.T) {
		v, db, err := open(key, "ws1")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for name, value := range values {
			if got, ok := v.Lookup(name); !ok || got != value {
				t.Errorf("Lookup(%s) = %.12q, %v; want the saved value", name, got, ok)
			}
		}
		if got := v.Redact("x " + values["GITHUB_TOKEN"]); got != "x [redacted:GITHUB_TOKEN]" {
			t.Errorf("Redact after reopen = %q", got)
		}
	})
	t.Run("another key fails clearly", func(t *testing.T) {
		_, db, err := open(bytes.Repeat([]byte{0xEE}, 32), "ws1")
		defer db.Close()
		if !errors.Is(err, ErrWrongKey) {
			t.Fatalf("got %v, want ErrWrongKey", err)
		}
		for _, s := range []string{"3 of 3", "DB_PASSWORD, GITHUB_TOKEN, PEM", "restore the key", "Rerun Desktop"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q does not contain %q", err, s)
			}
		}
		for _, value := range values {
			if strings.Contains(err.Error(), value) {
				t.Errorf("error %q contains a value", err)
			}
		}
	})
	t.Run("another workspace cannot open them", func(t *testing.T) {
		_, db, err := open(key, "ws2")
		defer db.Close()
		if !errors.Is(err, ErrWrongKey) {
			t.Errorf("got %v, want ErrWrongKey", err)
		}
	})
	t.Run("a value moved to another name does not open", func(t *testing.T) {
		db, err := store.Open(ctx, dbPath, store.WorkspaceMigrations())
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		// Copy the sealed token into PEM's row.
		if _, err := db.Exec(`UPDATE variables SET value = (SELECT value FROM variables WHERE name = 'GITHUB_TOKEN') WHERE name = 'PEM'`); err != nil {
			t.Fatal(err)
		}
		_, err = NewVariables(db, mustBox(t, key), "ws1", nil)
		if !errors.Is(err, ErrWrongKey) || !strings.Contains(err.Error(), "1 of 3 (PEM)") {
			t.Errorf("got %v, want ErrWrongKey naming PEM", err)
		}
	})
}

func mustBox(t *testing.T, key []byte) *Box {
	t.Helper()
	b, err := NewBox(key)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVariablesConcurrentUse(t *testing.T) {
	ctx := context.Background()
	v, err := NewVariables(storetest.Open(t), testBox(t, 2), "ws1", nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := range 10 {
				if _, err := v.Set(ctx, "VAR_"+string(rune('A'+i)), strings.Repeat(string(rune('a'+j)), 8)); err != nil {
					t.Error(err)
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range 200 {
				v.Redact("some output aaaaaaaa bbbbbbbb")
				v.Resolve("${VAR_A}")
				v.Names()
			}
		}()
	}
	wg.Wait()
	for i := range 4 {
		name := "VAR_" + string(rune('A'+i))
		if got, _ := v.Lookup(name); got != "jjjjjjjj" {
			t.Errorf("%s = %q, want the last value written", name, got)
		}
	}
	if got := v.Redact("jjjjjjjj"); got != "[redacted:VAR_A]" {
		t.Errorf("Redact = %q, want the final values masked", got)
	}
}
