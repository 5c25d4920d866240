// Package agentfile owns the .rerun-agent file: one agent exported with what
// it learned — its setup as a template package (backend/template reads and
// checks that part, paths included), its memories with their strength and
// history, and every version of its soul. Never variables' values or
// credentials: the template package refuses them, and memories are checked
// for them by the caller. Its JSON Schema is agent.schema.json. Service
// (service.go) exports a workspace's agent into one and imports one.
package agentfile

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Format, Version and Extension name the file.
const (
	Format    = "rerun-agent"
	Version   = 1
	Extension = ".rerun-agent"
	// MaxBytes bounds a file (the template package inside is at most 50 MiB).
	MaxBytes = 80 << 20
)

//go:embed agent.schema.json
var schemaJSON []byte

// File is a .rerun-agent file.
type File struct {
	Format     string   `json:"format"`
	Version    int      `json:"version"`
	Name       string   `json:"name"`
	Handle     string   `json:"handle"`
	ExportedAt string   `json:"exported_at,omitempty"`
	Template   []byte   `json:"template"` // a .rerun-template package (base64 in JSON)
	Souls      []Soul   `json:"souls"`
	Memories   []Memory `json:"memories"`
}

// Soul is one version of the soul.
type Soul struct {
	Version   int    `json:"version"`
	Body      string `json:"body"`
	CreatedAt string `json:"created_at"`
}

// Memory is one memory with its history: strength as of ReinforcedAt, how
// often it was recalled, and which memory it corrected or was corrected by.
type Memory struct {
	ID             string  `json:"id"`
	Text           string  `json:"text"`
	State          string  `json:"state"`
	Supersedes     string  `json:"supersedes,omitempty"`
	SupersededBy   string  `json:"superseded_by,omitempty"`
	Strength       float64 `json:"strength"`
	Recalls        int     `json:"recalls,omitempty"`
	ReinforcedAt   string  `json:"reinforced_at"`
	LastRecalledAt string  `json:"last_recalled_at,omitempty"`
	CreatedAt      string  `json:"created_at"`
	UpdatedAt      string  `json:"updated_at"`
}

// Marshal writes f as a .rerun-agent file.
func Marshal(f File) ([]byte, error) {
	f.Format, f.Version = Format, Version
	if f.Souls == nil {
		f.Souls = []Soul{}
	}
	if f.Memories == nil {
		f.Memories = []Memory{}
	}
	return json.MarshalIndent(f, "", " ")
}

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("agent.schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("agent.schema.json")
})

// Read parses and checks a .rerun-agent file: size, JSON, the schema, and
// that every memory's history points inside the file. The template package
// inside is the caller's to read with template.ReadPackage. Errors are
// fault.ErrInvalid, saying what is wrong.
func Read(data []byte) (File, error) {
	if len(data) > MaxBytes {
		return File{}, fault.Invalid("the agent file is %d MiB; it holds at most %d MiB", len(data)>>20, MaxBytes>>20)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return File{}, fault.Invalid("this is not a Rerun agent file (not valid JSON: %v)", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok || obj["format"] != Format {
		return File{}, fault.Invalid("this is not a Rerun agent file (format is not %q); a template is imported from the Templates view", Format)
	}
	s, err := compiled()
	if err != nil {
		return File{}, fmt.Errorf("agent file schema: %w", err)
	}
	if err := s.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return File{}, fault.Invalid("the agent file does not follow its schema: %v", firstCause(ve))
		}
		return File{}, fault.Invalid("the agent file does not follow its schema: %v", err)
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return File{}, fault.Invalid("the agent file: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return File{}, fault.Invalid("the agent file has data after its object")
	}
	ids := map[string]bool{}
	for _, m := range f.Memories {
		if ids[m.ID] {
			return File{}, fault.Invalid("memory %s appears twice in the agent file", m.ID)
		}
		ids[m.ID] = true
	}
	for _, m := range f.Memories {
		for _, ref := range []string{m.Supersedes, m.SupersededBy} {
			if ref != "" && !ids[ref] {
				return File{}, fault.Invalid("memory %s refers to memory %.64q, which the file does not hold", m.ID, ref)
			}
		}
	}
	versions := map[int]bool{}
	for _, s := range f.Souls {
		if versions[s.Version] {
			return File{}, fault.Invalid("soul version %d appears twice in the agent file", s.Version)
		}
		versions[s.Version] = true
	}
	return f, nil
}

// firstCause is the deepest first error of a schema validation: the one
// that names the field.
func firstCause(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	for len(e.Causes) > 0 {
		e = e.Causes[0]
	}
	return e
}
