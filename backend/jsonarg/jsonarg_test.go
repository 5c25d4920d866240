package jsonarg_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
)

type inner struct {
	Colour string `json:"colour"`
}

type target struct {
	Path        string            `json:"path"`
	Count       int               `json:"count"`
	Size        uint              `json:"size,omitempty"`
	Ratio       float64           `json:"ratio"`
	Force       bool              `json:"force"`
	Tags        []string          `json:"tags"`
	Inner       *inner            `json:"inner"`
	Labels      map[string]string `json:"labels"`
	Skipped     string            `json:"-"`
	Instruction string            `json:"instruction"`
	RunID       string            `json:"run_id"`
}

func TestDecodeMessages(t *testing.T) {
	tests := []struct {
		name, input, want string // want "" means accepted
	}{
		{"ok", `{"path":"a","count":2}`, ""},
		{"empty is an empty object", ``, ""},
		{"blank is an empty object", " \n\t", ""},
		{"null is an empty object", `null`, ""},
		{"trailing blanks", `{"path":"a"}` + "\n\n", ""},
		{"unknown field, a swap away", `{"paht":"a"}`, `unknown field "paht"; did you mean "path"?`},
		{"unknown field, a letter short", `{"pth":"a","count":1}`, `unknown field "pth"; did you mean "path"?`},
		{"unknown field, nested", `{"inner":{"color":"red"}}`, `unknown field "color"; did you mean "colour"?`},
		{"unknown field, two edits in a long name", `{"instrction":"x"}`, `unknown field "instrction"; did you mean "instruction"?`},
		{"unknown field, a name without its suffix", `{"run":"x"}`, `unknown field "run"; did you mean "run_id"?`},
		{"unknown field, nothing close", `{"every":"day"}`, `unknown field "every"; send only the fields listed in the schema`},
		{"unknown field known at another depth", `{"colour":"red"}`, `unknown field "colour"; send only the fields listed in the schema`},
		{"a field tagged - is unknown", `{"Skipped":"x"}`, `unknown field "Skipped"; send only the fields listed in the schema`},
		{"string for integer", `{"count":"two"}`, `field "count" must be an integer, not a string`},
		{"fraction for integer", `{"count":2.5}`, `field "count" must be an integer, not 2.5`},
		{"negative for unsigned", `{"size":-1}`, `field "size" must be an integer of 0 or more, not -1`},
		{"number for string", `{"path":5}`, `field "path" must be a string, not a number`},
		{"string for boolean", `{"force":"yes"}`, `field "force" must be true or false, not a string`},
		{"boolean for number", `{"ratio":true}`, `field "ratio" must be a number, not true or false`},
		{"string for list", `{"tags":"a,b"}`, `field "tags" must be a list (JSON array), not a string`},
		{"list for object", `{"labels":[]}`, `field "labels" must be an object, not a list`},
		{"nested wrong type", `{"inner":{"colour":1}}`, `field "inner.colour" must be a string, not a number`},
		{"a list", `[1]`, `the input must be a JSON object, not a list`},
		{"a string", `"path"`, `the input must be a JSON object, not a string`},
		{"cut short", `{"path":`, `the input is not valid JSON: it ends in the middle of a value; send one complete JSON object`},
		{"syntax", `{"path" "a"}`, `the input is not valid JSON at byte 9 (invalid character '"' after object key); send one JSON object`},
		{"two objects", `{} {}`, `the input holds more than one JSON value: there is data after the JSON object; send exactly one object`},
		{"garbage after", `{"path":"a"} ]`, `the input holds more than one JSON value: there is data after the JSON object; send exactly one object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v target
			err := jsonarg.Decode([]byte(tt.input), &v)
			if tt.want == "" {
				if err != nil {
					t.Errorf("got %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, fault.ErrInvalid) {
				t.Fatalf("got %v, want an ErrInvalid", err)
			}
			if got := fault.Message(err); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestDecodeFills(t *testing.T) {
	var v target
	if err := jsonarg.Decode([]byte(`{"PATH":"a","tags":["x"],"inner":{"colour":"red"}}`), &v); err != nil {
		t.Fatal(err)
	}
	want := target{Path: "a", Tags: []string{"x"}, Inner: &inner{Colour: "red"}}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("got %+v, want %+v", v, want)
	}
}

// upper refuses lower-case text with its own message, as browser's element
// numbers do.
type upper string

func (u *upper) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil || strings.ToUpper(s) != s {
		return fault.Invalid("%s is not upper case; write it in capitals", b)
	}
	*u = upper(s)
	return nil
}

func TestDecodeKeepsATypesOwnMessage(t *testing.T) {
	var v struct {
		Code upper `json:"code"`
	}
	err := jsonarg.Decode([]byte(`{"code":"abc"}`), &v)
	if got, want := fault.Message(err), `"abc" is not upper case; write it in capitals`; !errors.Is(err, fault.ErrInvalid) || got != want {
		t.Errorf("got %v, want ErrInvalid %q", err, want)
	}
}

func TestDecodeIntoNoPointerIsNoInvalidInput(t *testing.T) {
	var v target
	err := jsonarg.Decode([]byte(`{}`), v)
	if err == nil || fault.Is(err) {
		t.Errorf("got %v, want a programming error, not a fault kind", err)
	}
}

func TestUnknownField(t *testing.T) {
	var v target
	err := jsonarg.Decode([]byte(`{"api_key":"sk-1"}`), &v)
	if f, ok := jsonarg.UnknownField(err); !ok || f != "api_key" {
		t.Errorf("UnknownField(%v) = %q, %v; want api_key, true", err, f, ok)
	}
	if !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("got %v, want an ErrInvalid", err)
	}
	err = jsonarg.Decode([]byte(`{"count":"x"}`), &v)
	if f, ok := jsonarg.UnknownField(err); ok {
		t.Errorf("UnknownField of a type error = %q, true; want false", f)
	}
	if _, ok := jsonarg.UnknownField(nil); ok {
		t.Error("UnknownField(nil) = true, want false")
	}
}

func TestReadMessages(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"ok", `{"path":"a"}`, ""},
		{"null", `null`, ""},
		{"empty", ``, "the input is empty; send one JSON object"},
		{"blank", "  \n", "the input is empty; send one JSON object"},
		{"unknown field", `{"nmae":"x"}`, `unknown field "nmae"; send only the fields listed in the schema`},
		{"trailing", `{"path":"a"} {}`, `the input holds more than one JSON value: there is data after the JSON object; send exactly one object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v target
			err := jsonarg.Read(strings.NewReader(tt.body), &v)
			if tt.want == "" {
				if err != nil {
					t.Errorf("got %v, want nil", err)
				}
				return
			}
			if got := fault.Message(err); !errors.Is(err, fault.ErrInvalid) || got != tt.want {
				t.Errorf("got %v, want ErrInvalid %q", err, tt.want)
			}
		})
	}
}

// A body over http.MaxBytesReader's limit is the reader's error, not a
// malformed body: the caller answers 413, not 400.
func TestReadPassesTheReadersError(t *testing.T) {
	for name, body := range map[string]string{
		"inside the object": `{"path":"` + strings.Repeat("a", 100) + `"}`,
		"after the object":  `{"path":"a"}` + strings.Repeat(" ", 100) + "x",
	} {
		t.Run(name, func(t *testing.T) {
			r := http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(strings.NewReader(body)), 40)
			var v target
			err := jsonarg.Read(r, &v)
			var mbe *http.MaxBytesError
			if !errors.As(err, &mbe) || fault.Is(err) {
				t.Errorf("got %v, want the *http.MaxBytesError, not a fault kind", err)
			}
		})
	}
}

// FuzzDecode: never a panic; every refusal is an ErrInvalid with a message;
// what is accepted is one JSON value (or nothing) that plain json.Unmarshal
// reads the same way.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{``, `null`, `{}`, `{"path":"a","count":1}`, `{"paht":1}`, `{"inner":{"colour":"x","c":1}}`,
		`[1]`, `{} {}`, `{"count":1e400}`, `{"tags":["a",1]}`, `{"size":-1}`, `{"labels":{"a":"b"}}`, `{"path":"\ud800"}`, "{\"x\":\xff}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got target
		err := jsonarg.Decode(data, &got)
		if err != nil {
			if !errors.Is(err, fault.ErrInvalid) || fault.Message(err) == "" {
				t.Fatalf("refusal %v is not an ErrInvalid with a message", err)
			}
			return
		}
		if strings.TrimSpace(string(data)) == "" {
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted %q, which is not one valid JSON value", data)
		}
		var want target
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("accepted %q, which json.Unmarshal refuses: %v", data, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded %q as %+v; json.Unmarshal reads %+v", data, got, want)
		}
	})
}
