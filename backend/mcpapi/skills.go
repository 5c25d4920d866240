package mcpapi

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/skill"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// SkillView is a skill as get_skill and upsert_skill show it.
type SkillView struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	SkillMD     string   `json:"skill_md"` // the whole SKILL.md
	Files       []string `json:"files"`    // reference files beside it
}

// maxSkillFiles bounds the reference files one upsert_skill writes.
const maxSkillFiles = 50

func skillTools() []toolDef {
	skillName := `"name":{"type":"string","description":"The skill's name (lowercase-with-hyphens)."}`
	return []toolDef{{
		name: "list_skills", title: "List an agent's skills", readOnly: true, idempotent: true,
		description: "List an agent's skills: written procedures (SKILL.md) it loads when a task matches their description. A skill that fails to parse is listed with its error.",
		schema:      `{"type":"object","properties":{` + agentRef + `},"required":["agent"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			a, err := agentOnly(ctx, w, args)
			if err != nil {
				return nil, err
			}
			list, err := w.Skills.List(ctx, a.ID)
			if list == nil {
				list = []skill.Summary{}
			}
			return map[string]any{"skills": list}, err
		},
	}, {
		name: "get_skill", title: "Get a skill", readOnly: true, idempotent: true,
		description: "Get one skill of an agent: its whole SKILL.md and the list of its reference files; pass file to read one of those files instead.",
		schema: `{"type":"object","properties":{` + agentRef + `,` + skillName + `,` +
			`"file":{"type":"string","description":"A reference file of the skill to read (a path from files)."}},"required":["agent","name"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			var in struct{ Agent, Name, File string }
			if err := decode(args, &in); err != nil {
				return nil, err
			}
			a, err := findAgent(ctx, w, in.Agent)
			if err != nil {
				return nil, err
			}
			if in.File != "" {
				b, err := w.Skills.ReadFile(ctx, a.ID, in.Name, in.File)
				if err != nil {
					return nil, err
				}
				if !utf8.Valid(b) {
					return nil, fault.Invalid("%s is a binary file (%d bytes); only text files are shown here", in.File, len(b))
				}
				return map[string]any{"name": in.Name, "file": in.File, "content": string(b)}, nil
			}
			l, err := w.Skills.Load(ctx, a.ID, in.Name)
			if err != nil {
				return nil, err
			}
			md, err := skill.Render(l.Skill)
			if err != nil {
				return nil, err
			}
			return SkillView{Name: l.Name, Description: l.Description, SkillMD: string(md), Files: l.Files}, nil
		},
	}, {
		name: "upsert_skill", title: "Create or update a skill", idempotent: true,
		description: "Create or replace an agent's skill. skill_md is the whole SKILL.md: YAML front matter with name (lowercase-with-hyphens) and description " +
			"(what it does and when to use it), then the markdown procedure. files adds or replaces text reference files in the skill's folder " +
			"(path → content; null deletes one); files not named are kept. Every version of SKILL.md is kept.",
		schema: `{"type":"object","properties":{` + agentRef + `,` +
			`"skill_md":{"type":"string","description":"The whole SKILL.md, front matter included."},` +
			`"files":{"type":"object","additionalProperties":{"anyOf":[{"type":"string"},{"type":"null"}]},"description":"Reference files: relative path → text content, or null to delete."}` +
			`},"required":["agent","skill_md"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			var in struct {
				Agent   string             `json:"agent"`
				SkillMD string             `json:"skill_md"`
				Files   map[string]*string `json:"files"`
			}
			if err := decode(args, &in); err != nil {
				return nil, err
			}
			a, err := findAgent(ctx, w, in.Agent)
			if err != nil {
				return nil, err
			}
			parsed, err := skill.Parse([]byte(in.SkillMD))
			if err != nil {
				return nil, fault.Invalid("skill_md: %v", err)
			}
			if err := refuseSecrets(w, "skill_md", "a skill", &in.SkillMD); err != nil {
				return nil, err
			}
			for _, p := range slices.Sorted(maps.Keys(in.Files)) {
				if err := refuseSecrets(w, "skill file "+p, "a skill", in.Files[p]); err != nil {
					return nil, err
				}
			}
			if len(in.Files) > maxSkillFiles {
				return nil, fault.Invalid("%d files in one call; send at most %d", len(in.Files), maxSkillFiles)
			}
			var files map[string][]byte
			if len(in.Files) > 0 {
				files = map[string][]byte{}
				for p, c := range in.Files {
					if c == nil {
						files[p] = nil
					} else {
						files[p] = []byte(*c)
					}
				}
			}
			sk, err := w.Skills.Upsert(ctx, a.ID, parsed.Name, in.SkillMD, files)
			if err != nil {
				return nil, err
			}
			l, err := w.Skills.Load(ctx, a.ID, sk.Name)
			if err != nil {
				return nil, err
			}
			return SkillView{Name: sk.Name, Description: sk.Description, SkillMD: strings.TrimSpace(in.SkillMD) + "\n", Files: l.Files}, nil
		},
	}, {
		name: "delete_skill", title: "Delete a skill", destructive: true, idempotent: true,
		description: "Delete one of an agent's skills with its folder and versions.",
		schema:      `{"type":"object","properties":{` + agentRef + `,` + skillName + `},"required":["agent","name"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			var in struct{ Agent, Name string }
			if err := decode(args, &in); err != nil {
				return nil, err
			}
			a, err := findAgent(ctx, w, in.Agent)
			if err != nil {
				return nil, err
			}
			if err := w.Skills.Delete(ctx, a.ID, in.Name); err != nil {
				return nil, err
			}
			return map[string]any{"deleted": in.Name}, nil
		},
	}}
}
