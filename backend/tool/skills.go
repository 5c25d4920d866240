package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
	"github.com/rerun-build/rerun-desktop/backend/skill"
)

// MaxSkillFileOutput bounds what read_skill_file hands back.
const MaxSkillFileOutput = 256 << 10

func skillsTools() []Tool {
	return []Tool{{
		Name:   "list_skills",
		Family: "skills",
		Description: "List your skills (written procedures) as name: description lines. The same index is in your " +
			"instructions; call this after adding one, or to see skills whose SKILL.md does not parse.",
		Schema: json.RawMessage(`{"type":"object","properties":{},"required":[],"additionalProperties":false}`),
		Run:    listSkills,
	}, {
		Name:   "load_skill",
		Family: "skills",
		Description: "Load one of your skills by name: returns its instructions (the body of its SKILL.md) and the list of " +
			"its reference files. Load a skill when the task matches its description, then follow it.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"name":{"type":"string","description":"The skill's name, as the index shows it (like pdf-forms)."}` +
			`},"required":["name"],"additionalProperties":false}`),
		Run: loadSkill,
	}, {
		Name:   "read_skill_file",
		Family: "skills",
		Description: "Read one reference file of a skill, by its path relative to the skill's folder, as load_skill lists " +
			"it (like reference/fields.md). Returns at most 256 KiB.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"name":{"type":"string","description":"The skill's name."},` +
			`"path":{"type":"string","description":"The file's path inside the skill's folder, as load_skill lists it."}` +
			`},"required":["name","path"],"additionalProperties":false}`),
		Run: readSkillFile,
	}, {
		Name:   "upsert_skill",
		Family: "skills",
		Description: "Create one of your skills or improve it, when you learned a procedure worth following again. Send the " +
			"WHOLE SKILL.md: YAML front matter between --- lines with name (lowercase-with-hyphens, the same as the name " +
			"argument) and description (what it does and when to use it), then the markdown instructions. Every version is kept.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"name":{"type":"string","description":"The skill's name: lowercase letters, digits and hyphens, at most 64 characters."},` +
			`"skill_md":{"type":"string","description":"The complete SKILL.md: ---, name: …, description: …, ---, then the instructions."}` +
			`},"required":["name","skill_md"],"additionalProperties":false}`),
		Run:  upsertSkill,
		Acts: always,
		Preview: func(_ *Env, input json.RawMessage) (string, string, string) {
			in := argsOf(input)
			return "Save skill " + in.str("name"), "text", in.str("skill_md")
		},
	}}
}

func skills(env *Env) (SkillStore, error) {
	if env.Skills == nil {
		return nil, fault.Invalid("skills are not available in this run")
	}
	return env.Skills, nil
}

func listSkills(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
	var in struct{}
	if err := jsonarg.Decode(input, &in); err != nil {
		return "", err
	}
	store, err := skills(env)
	if err != nil {
		return "", err
	}
	list, err := store.List(ctx, env.AgentID)
	if err != nil {
		return "", fmt.Errorf("list skills: %w", err)
	}
	if len(list) == 0 {
		return "you have no skills yet; write one with upsert_skill when you learn a procedure worth keeping", nil
	}
	var b strings.Builder
	for _, s := range list {
		if s.Error != "" {
			fmt.Fprintf(&b, "%s: [broken: %s]\n", s.Name, s.Error)
			continue
		}
		b.WriteString(skill.IndexLine(s.Name, s.Description) + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func loadSkill(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
	var in struct {
		Name string `json:"name"`
	}
	if err := jsonarg.Decode(input, &in); err != nil {
		return "", err
	}
	store, err := skills(env)
	if err != nil {
		return "", err
	}
	sk, err := store.Load(ctx, env.AgentID, strings.TrimSpace(in.Name))
	if err != nil {
		return "", fmt.Errorf("load skill: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Skill %s\n\n%s\n", sk.Name, strings.TrimSpace(sk.Body))
	if len(sk.Files) == 0 {
		b.WriteString("\n(no reference files)")
	} else {
		b.WriteString("\nReference files (read them with read_skill_file when the instructions point to them):\n")
		for _, f := range sk.Files {
			b.WriteString("- " + f + "\n")
		}
	}
	return env.clip(strings.TrimSuffix(b.String(), "\n"), MaxSkillFileOutput), nil
}

func readSkillFile(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
	var in struct {
		Name string `json:"name"`
		Path string `json:"path"`
	}
	if err := jsonarg.Decode(input, &in); err != nil {
		return "", err
	}
	store, err := skills(env)
	if err != nil {
		return "", err
	}
	data, err := store.ReadFile(ctx, env.AgentID, strings.TrimSpace(in.Name), strings.TrimSpace(in.Path))
	if err != nil {
		return "", fmt.Errorf("read skill file: %w", err)
	}
	if !utf8.Valid(data) {
		return "", fault.Invalid("%s of skill %s is a binary file (%d bytes); it cannot be shown as text", in.Path, in.Name, len(data))
	}
	return env.clip(string(data), MaxSkillFileOutput), nil
}

func upsertSkill(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
	var in struct {
		Name    string `json:"name"`
		SkillMD string `json:"skill_md"`
	}
	if err := jsonarg.Decode(input, &in); err != nil {
		return "", err
	}
	if strings.TrimSpace(in.SkillMD) == "" {
		return "", fault.Invalid("skill_md is empty; send the whole SKILL.md, front matter included")
	}
	if err := env.refuseSecrets("skill_md", "a skill", in.SkillMD); err != nil {
		return "", err
	}
	store, err := skills(env)
	if err != nil {
		return "", err
	}
	sk, err := store.Upsert(ctx, env.AgentID, strings.TrimSpace(in.Name), in.SkillMD, nil)
	if err != nil {
		return "", fmt.Errorf("save skill: %w", err)
	}
	return fmt.Sprintf("skill %s saved (%d bytes); it is in your skill index from your next run: %s",
		sk.Name, len(in.SkillMD), skill.IndexLine(sk.Name, sk.Description)), nil
}
