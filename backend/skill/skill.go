// Package skill owns agents' skills: folders in the Agent Skills format
// (agents/<id>/skills/<name>/SKILL.md with YAML front matter `name` and
// `description` and a markdown body, plus optional reference files), the
// one-line index of them that goes in every prompt, loading a body or a
// reference file on demand (jailed to the skill's folder), every saved version
// of each SKILL.md, and import and export as .zip.
package skill

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Limits of the Agent Skills format.
const (
	MaxNameLen        = 64
	MaxDescriptionLen = 1024
	MaxSkillMDLen     = 256 << 10 // bytes of one SKILL.md
)

var nameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Skill is one parsed SKILL.md.
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// FrontMatter is the YAML between the --- lines, verbatim, with name,
	// description and any other fields (license, allowed-tools, metadata…).
	FrontMatter string `json:"front_matter"`
	// Body is the markdown after the front matter, verbatim.
	Body string `json:"body"`
}

// CheckName reports whether name is a valid skill name: lowercase letters,
// digits and single hyphens between them, at most 64 characters.
func CheckName(name string) error {
	switch {
	case name == "":
		return fault.Invalid("a skill needs a name")
	case len(name) > MaxNameLen:
		return fault.Invalid("skill name %q is longer than %d characters", name, MaxNameLen)
	case !nameRE.MatchString(name):
		if slug := Slug(name); slug != "" {
			return fault.Invalid("skill name %q may hold only lowercase letters, digits and single hyphens between them: try %q", name, slug)
		}
		return fault.Invalid("skill name %q may hold only lowercase letters, digits and single hyphens between them (like pdf-forms)", name)
	}
	return nil
}

// Slug turns a name a person typed ("Weekly Report") into a valid skill name
// ("weekly-report"): lowercase ASCII letters and digits, every other run of
// characters one hyphen, at most MaxNameLen long. It is "" when nothing usable
// is left.
func Slug(name string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen = false
			b.WriteRune(r)
		default:
			hyphen = true
		}
	}
	s := b.String()
	if len(s) > MaxNameLen {
		s = strings.TrimRight(s[:MaxNameLen], "-")
	}
	return s
}

func checkDescription(d string) error {
	switch {
	case strings.TrimSpace(d) == "":
		return fault.Invalid("SKILL.md front matter needs a description: say what the skill does and when to use it")
	case utf8.RuneCountInString(d) > MaxDescriptionLen:
		return fault.Invalid("the skill's description is longer than %d characters", MaxDescriptionLen)
	}
	return nil
}

// Parse reads a SKILL.md.
func Parse(data []byte) (Skill, error) {
	if len(data) > MaxSkillMDLen {
		return Skill{}, fault.Invalid("SKILL.md is larger than %d KiB", MaxSkillMDLen>>10)
	}
	if !utf8.Valid(data) {
		return Skill{}, fault.Invalid("SKILL.md is not UTF-8 text")
	}
	text := strings.TrimPrefix(string(data), "\uFEFF")
	first, rest, ok := cutLine(text)
	if strings.TrimRight(first, " \t\r") != "---" {
		return Skill{}, fault.Invalid("SKILL.md must start with YAML front matter: a line ---, name: and description: fields, and a closing ---")
	}
	var fm strings.Builder
	closed := false
	for ok {
		var line string
		line, rest, ok = cutLine(rest)
		if strings.TrimRight(line, " \t\r") == "---" {
			closed = true
			break
		}
		fm.WriteString(strings.TrimSuffix(line, "\r"))
		fm.WriteByte('\n')
		if !ok {
			break
		}
	}
	if !closed {
		return Skill{}, fault.Invalid("SKILL.md front matter has no closing --- line")
	}
	s := Skill{FrontMatter: fm.String(), Body: rest}
	var fields struct {
		Name        any `yaml:"name"`
		Description any `yaml:"description"`
	}
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(s.FrontMatter), &node); err != nil {
		return Skill{}, fault.Invalid("SKILL.md front matter is not valid YAML: %v", err)
	}
	if len(node.Content) == 0 || node.Content[0].Kind != yaml.MappingNode {
		return Skill{}, fault.Invalid("SKILL.md front matter must be YAML fields (name: …, description: …)")
	}
	if err := node.Decode(&fields); err != nil {
		return Skill{}, fault.Invalid("SKILL.md front matter: %v", err)
	}
	name, ok1 := fields.Name.(string)
	desc, ok2 := fields.Description.(string)
	if fields.Name == nil {
		return Skill{}, fault.Invalid("SKILL.md front matter needs a name")
	}
	if !ok1 {
		return Skill{}, fault.Invalid("the skill's name must be text")
	}
	if fields.Description != nil && !ok2 {
		return Skill{}, fault.Invalid("the skill's description must be text")
	}
	if err := CheckName(name); err != nil {
		return Skill{}, err
	}
	if err := checkDescription(desc); err != nil {
		return Skill{}, err
	}
	s.Name, s.Description = name, desc
	return s, nil
}

// cutLine splits off the first line (without its \n); ok is false when there
// is no \n.
func cutLine(s string) (line, rest string, ok bool) {
	i := strings.IndexByte(s, '\n')
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

// Render writes s as a SKILL.md. The front matter is kept verbatim when its
// name and description are s's; otherwise those two fields are replaced (or
// added) and the other fields kept in order.
func Render(s Skill) ([]byte, error) {
	fm := s.FrontMatter
	if cur, err := Parse([]byte("---\n" + fm + "---\n")); err != nil || cur.Name != s.Name || cur.Description != s.Description {
		var err error
		if fm, err = setFields(fm, s.Name, s.Description); err != nil {
			return nil, err
		}
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	b.WriteString(fm)
	b.WriteString("---\n")
	b.WriteString(s.Body)
	return b.Bytes(), nil
}

// setFields sets name and description in the YAML mapping fm.
func setFields(fm, name, description string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	if err := checkDescription(description); err != nil {
		return "", err
	}
	var doc yaml.Node
	if strings.TrimSpace(fm) != "" {
		if err := yaml.Unmarshal([]byte(fm), &doc); err != nil {
			return "", fault.Invalid("front matter is not valid YAML: %v", err)
		}
	}
	if len(doc.Content) == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return "", fault.Invalid("front matter must be YAML fields")
	}
	set := func(key, value string) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				m.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}
				return
			}
		}
		m.Content = append(m.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Value: key},
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value})
	}
	set("name", name)
	set("description", description)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return "", fmt.Errorf("encode front matter: %w", err)
	}
	enc.Close()
	return b.String(), nil
}

// IndexLine is s in the prompt's skill index: "name: description" on one line.
func IndexLine(name, description string) string {
	return name + ": " + strings.Join(strings.Fields(description), " ")
}
