// Package jsonarg owns strict decoding of the JSON objects callers send: a
// tool's arguments, a request body, an answer to a pause. One object and
// nothing after it; an unknown field is refused (with the nearest known
// name when one is close) instead of silently ignored; every refusal is a
// fault.ErrInvalid whose message says what to fix.
package jsonarg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Decode reads data, one JSON object, into v (a pointer). Empty data counts
// as {}, as a model calling a tool without arguments sends nothing; null
// leaves v as it is.
func Decode(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
	}
	return decode(json.NewDecoder(bytes.NewReader(data)), nil, v)
}

// Read reads r to its end, one JSON object, into v (a pointer). Unlike
// [Decode] an empty r is refused: a request body is sent on purpose. An
// error of r itself (a body over its size limit, a dropped connection) is
// returned wrapped, not as ErrInvalid, so the caller can tell it apart.
func Read(r io.Reader, v any) error {
	src := &reader{r: r}
	return decode(json.NewDecoder(src), src, v)
}

// UnknownField is the name of the field err refused, when err is Decode's
// or Read's refusal of an unknown field, so a caller can say more about a
// name it knows (a field that is read-only, a credential).
func UnknownField(err error) (string, bool) {
	var u *unknownFieldError
	if errors.As(err, &u) {
		return u.field, true
	}
	return "", false
}

func decode(dec *json.Decoder, src *reader, v any) error {
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return explain(err, src, v)
	}
	if _, err := dec.Token(); err != io.EOF {
		if src != nil && src.err != nil {
			return fmt.Errorf("read JSON: %w", src.err)
		}
		return fault.Invalid("the input holds more than one JSON value: there is data after the JSON object; send exactly one object")
	}
	return nil
}

// explain turns a decoding error into a message saying what to fix.
func explain(err error, src *reader, v any) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var inv *json.InvalidUnmarshalError
	switch {
	case src != nil && src.err != nil && errors.Is(err, src.err):
		return fmt.Errorf("read JSON: %w", err)
	case errors.Is(err, fault.ErrInvalid): // a type's own UnmarshalJSON said what to fix
		return err
	case errors.As(err, &inv):
		return fmt.Errorf("decode JSON: %w", err) // v is no pointer: a programming error
	case errors.Is(err, io.EOF):
		return fault.Invalid("the input is empty; send one JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fault.Invalid("the input is not valid JSON: it ends in the middle of a value; send one complete JSON object")
	case errors.As(err, &syn):
		return fault.Invalid("the input is not valid JSON at byte %d (%s); send one JSON object", syn.Offset, syn)
	case errors.As(err, &typ) && typ.Field == "":
		return fault.Invalid("the input must be a JSON object, not %s", valueName(typ.Value))
	case errors.As(err, &typ):
		return fault.Invalid("field %q must be %s, not %s", typ.Field, typeName(typ.Type), valueName(typ.Value))
	}
	if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name := strings.Trim(field, `"`)
		if near := nearest(name, fieldNames(reflect.TypeOf(v))); near != "" {
			return &unknownFieldError{name, fault.Invalid("unknown field %s; did you mean %q?", field, near)}
		}
		return &unknownFieldError{name, fault.Invalid("unknown field %s; send only the fields listed in the schema", field)}
	}
	return fault.Invalid("the input does not fit the schema: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// unknownFieldError is the refusal of an unknown field; it unwraps to the
// fault.ErrInvalid that carries the message.
type unknownFieldError struct {
	field string
	err   error
}

func (e *unknownFieldError) Error() string { return e.err.Error() }
func (e *unknownFieldError) Unwrap() error { return e.err }

// reader remembers the error of the reader under a json.Decoder, which the
// decoder returns as is.
type reader struct {
	r   io.Reader
	err error
}

func (r *reader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// typeName says what a field of Go type t takes, in the words of JSON.
func typeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer of 0 or more"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "a list (JSON array)"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a value of another kind"
}

// valueName names the JSON value encoding/json found ("string", "number",
// "number 3.5", "bool", "array", "object").
func valueName(v string) string {
	switch v {
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "true or false"
	case "array":
		return "a list"
	case "object":
		return "an object"
	}
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return n
	}
	return "a JSON " + v
}
