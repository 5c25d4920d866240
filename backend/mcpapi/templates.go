package mcpapi

import (
	"context"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/template"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// TemplateSummary is a template as list_templates shows it: what it is and
// what it needs, without its soul and skills' text.
type TemplateSummary struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Category    string    `json:"category"`
	Price       string    `json:"price"`
	Status      string    `json:"status"`
	Skills      []string  `json:"skills"`
	Schedules   []string  `json:"schedules"`
	Connectors  []string  `json:"connectors"` // catalog ids
	Variables   []string  `json:"variables"`  // names
	Files       int       `json:"files"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func toSummary(t template.Template) TemplateSummary {
	s := TemplateSummary{ID: t.ID, Name: t.Name, Description: t.Description, Category: t.Category, Price: t.Price,
		Status: t.Status, Skills: []string{}, Schedules: []string{}, Connectors: []string{}, Variables: []string{},
		Files: len(t.Files), UpdatedAt: t.UpdatedAt}
	for _, x := range t.Skills {
		s.Skills = append(s.Skills, x.Name)
	}
	for _, x := range t.Schedules {
		s.Schedules = append(s.Schedules, x.Name)
	}
	for _, x := range t.Connectors {
		s.Connectors = append(s.Connectors, x.CatalogID)
	}
	for _, x := range t.Variables {
		s.Variables = append(s.Variables, x.Name)
	}
	return s
}

// findTemplate accepts a template's id (tpl_…) or its name.
func findTemplate(ctx context.Context, w *workspace.Workspace, ref string) (template.Template, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return template.Template{}, fault.Invalid("template: say which template, by its id (tpl_…) or name; list_templates shows them")
	}
	if strings.HasPrefix(ref, "tpl_") {
		if t, err := w.Templates.Get(ctx, ref); err == nil {
			return t, nil
		}
	}
	list, err := w.Templates.List(ctx)
	if err != nil {
		return template.Template{}, err
	}
	var found []template.Template
	for _, t := range list {
		if strings.EqualFold(t.Name, ref) {
			found = append(found, t)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return template.Template{}, fault.NotFound("template: no template %q in this workspace; list_templates shows ids and names", ref)
	}
	return template.Template{}, fault.Conflict("template: %d templates are named %q; give the id instead (list_templates shows them)", len(found), ref)
}

// templateFields are the manifest's fields as the tools take them.
type templateFields struct {
	Name         *string              `json:"name"`
	Description  *string              `json:"description"`
	Author       *string              `json:"author"`
	Category     *string              `json:"category"`
	Price        *string              `json:"price"`
	Model        *template.Model      `json:"model"`
	Capabilities *[]string            `json:"capabilities"`
	AskFirst     map[string]bool      `json:"ask_first"`
	Soul         *string              `json:"soul"`
	Connectors   *[]string            `json:"connectors"`
	Variables    *[]template.Variable `json:"variables"`
	Triggers     *[]template.Trigger  `json:"triggers"`
}

func (f templateFields) patch() template.Patch {
	p := template.Patch{Name: f.Name, Description: f.Description, Author: f.Author, Category: f.Category, Price: f.Price,
		Model: f.Model, Capabilities: f.Capabilities, AskFirst: f.AskFirst, Soul: f.Soul, Variables: f.Variables, Triggers: f.Triggers}
	if f.Connectors != nil {
		list := []template.Connector{}
		for _, ref := range *f.Connectors {
			list = append(list, template.Connector{CatalogID: ref}) // an id or a name: checked against the catalog
		}
		p.Connectors = &list
	}
	return p
}

const (
	templateRef      = `"template":{"type":"string","description":"The template's id (tpl_…) or name."}`
	templateMetadata = `"name":{"type":"string","description":"The template's name, e.g. Support inbox triage."},` +
		`"description":{"type":"string","description":"What the agent does and for whom: the library card's text."},` +
		`"author":{"type":"string"},"category":{"type":"string","description":"e.g. Support, Sales, Engineering."},` +
		`"price":{"type":"string","enum":["free","paid"],"description":"A label only."}`
	templateContent = `"model":{"type":"object","properties":{"provider":{"type":"string"},"model":{"type":"string"}},"additionalProperties":false,"description":"The model suggested to whoever installs it."},` +
		`"capabilities":{"type":"array","items":{"type":"string"},"description":"Tool families: files, shell, browser, database, memory, skills, soul, agents, human, web, connectors."},` +
		`"ask_first":{"type":"object","additionalProperties":{"type":"boolean"},"description":"Approval policy: family → whether a person approves each action first (files, shell, database, web, soul, agents, memory, skills)."},` +
		`"soul":{"type":"string","description":"The agent's system prompt, markdown."},` +
		`"connectors":{"type":"array","items":{"type":"string"},"description":"Catalog apps it needs, by id or name (search_connectors shows them); replaces the list. The person signs in after installing."},` +
		`"variables":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"help":{"type":"string"},"url":{"type":"string"}},"required":["name"],"additionalProperties":false},` +
		`"description":"Names of the workspace variables it needs (UPPER_CASE), with help and where to get each; never values. Replaces the list."},` +
		`"triggers":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"instruction":{"type":"string"},"methods":{"type":"array","items":{"type":"string"}}},"required":["name","instruction"],"additionalProperties":false},` +
		`"description":"Webhook trigger definitions (no token: installing makes a new URL). Replaces the list."}`
)

// templatePublishing is what the tools say about sharing a template.
const templatePublishing = "Templates cannot be published through the API: export the package (.rerun-template) from the Rerun app's template library to share it."

func templateTools() []toolDef {
	return []toolDef{{
		name: "list_templates", title: "List templates", readOnly: true, idempotent: true,
		description: "List the workspace's templates: packaged agent setups (soul, model, capabilities, skills, scheduled tasks, app declarations, variable names, files) " +
			"that install as a new agent. Shows what each needs (apps, variable names) and its status (draft or submitted).",
		schema: `{"type":"object","properties":{},"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			if err := decode(args, &struct{}{}); err != nil {
				return nil, err
			}
			list, err := w.Templates.List(ctx)
			out := []TemplateSummary{}
			for _, t := range list {
				out = append(out, toSummary(t))
			}
			return map[string]any{"templates": out}, err
		},
	}, {
		name: "get_template", title: "Get a template", readOnly: true, idempotent: true,
		description: "Get a template whole: metadata, soul, model, capabilities, approval policy, skills (with their files), scheduled tasks, trigger definitions, apps, variable names and files. " +
			"Pass skill to read that skill's SKILL.md (or file with it, one of the skill's files), or file alone to read a file of the template's files/.",
		schema: `{"type":"object","properties":{` + templateRef + `,` +
			`"skill":{"type":"string","description":"A skill of the template: answers its SKILL.md, or with file one of its files."},` +
			`"file":{"type":"string","description":"A path under files/ (or, with skill, in the skill's folder)."}},"required":["template"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			var in struct{ Template, Skill, File string }
			if err := decode(args, &in); err != nil {
				return nil, err
			}
			t, err := findTemplate(ctx, w, in.Template)
			if err != nil {
				return nil, err
			}
			switch {
			case in.Skill != "":
				file := in.File
				if file == "" {
					file = "SKILL.md"
				}
				b, err := w.Templates.SkillFile(ctx, t.ID, in.Skill, file)
				if err != nil {
					return nil, err
				}
				return fileAnswer(file, b, map[string]any{"skill": in.Skill})
			case in.File != "":
				b, err := w.Templates.File(ctx, t.ID, in.File)
				if err != nil {
					return nil, err
				}
				return fileAnswer(in.File, b, nil)
			}
			return t, nil
		},
	}, {
		name: "create_template", title: "Create a template",
		description: "Create a template, blank or from an agent. With from_agent, the agent's setup is copied: soul, model, capabilities, approval policy, skills, scheduled tasks, " +
			"trigger definitions, its catalog apps, the names of the variables they and its text need, and its own files (up to 5 MiB) — never its memories, variable values, " +
			"trigger tokens or run history. The other arguments then change the copy (e.g. its name). A blank template needs a name. It starts as a draft.",
		schema: `{"type":"object","properties":{"from_agent":{"type":"string","description":"Copy this agent (id or @handle)."},` + templateMetadata + `,` + templateContent + `},"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			var in struct {
				FromAgent string `json:"from_agent"`
				templateFields
			}
			if err := decode(args, &in); err != nil {
				return nil, err
			}
			if in.FromAgent == "" {
				if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
					return nil, fault.Invalid("name: a blank template needs a name; or pass from_agent to copy an agent")
				}
				return w.Templates.Create(ctx, in.patch())
			}
			a, err := findAgent(ctx, w, in.FromAgent)
			if err != nil {
				return nil, fault.Invalid("from_agent: %s", fault.Message(err))
			}
			return w.Templates.FromAgent(ctx, a.ID, in.patch())
		},
	}, {
		name: "update_template", title: "Change a template", idempotent: true,
		description: "Change a template's metadata (name, description, author, category, price), soul, model suggestion, capabilities, approval policy, " +
			"app declarations, variable names or trigger definitions. Only the arguments given change; lists given replace the old ones. " +
			"A change makes a submitted template a draft again.",
		schema: `{"type":"object","properties":{` + templateRef + `,` + templateMetadata + `,` + templateContent + `},"required":["template"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			var in struct {
				Template string `json:"template"`
				templateFields
			}
			if err := decode(args, &in); err != nil {
				return nil, err
			}
			t, err := findTemplate(ctx, w, in.Template)
			if err != nil {
				return nil, err
			}
			return w.Templates.Update(ctx, t.ID, in.patch())
		},
	}, {
		name: "delete_template", title: "Delete a template", destructive: true, idempotent: true,
		description: "Delete a template from the library. Agents installed from it stay as they are.",
		schema:      `{"type":"object","properties":{` + templateRef + `},"required":["template"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			t, err := templateOnly(ctx, w, args)
			if err != nil {
				return nil, err
			}
			if err := w.Templates.Delete(ctx, t.ID); err != nil {
				return nil, err
			}
			return map[string]any{"deleted": t.ID, "name": t.Name}, nil
		},
	}, {
		name: "upsert_template_skill", title: "Add or change a template's skill", idempotent: true,
		description: "Add a skill to a template, or replace the one of that name. skill_md is the whole SKILL.md: YAML front matter with name (lowercase-with-hyphens) and description " +
			"(what it does and when to use it), then the markdown procedure. files adds or replaces text reference files in its folder (path → content; null deletes one); files not named are kept.",
		schema: `{"type":"object","properties":{` + templateRef + `,` +
			`"skill_md":{"type":"string","description":"The whole SKILL.md, front matter included."},` +
			`"files":{"type":"object","additionalProperties":{"anyOf":[{"type":"string"},{"type":"null"}]},"description":"Reference files: relative path → text content, or null to delete."}` +
			`},"required":["template","skill_md"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			var in struct {
				Template string             `json:"template"`
				SkillMD  string             `json:"skill_md"`
				Files    map[string]*string `json:"files"`
			}
			if err := decode(args, &in); err != nil {
				return nil, err
			}
			t, err := findTemplate(ctx, w, in.Template)
			if err != nil {
				return nil, err
			}
			if len(in.Files) > maxSkillFiles {
				return nil, fault.Invalid("files: %d files in one call; send at most %d", len(in.Files), maxSkillFiles)
			}
			files := map[string][]byte{}
			for p, c := range in.Files {
				files[p] = nil
				if c != nil {
					files[p] = []byte(*c)
				}
			}
			sk, err := w.Templates.UpsertSkill(ctx, t.ID, in.SkillMD, files)
			return map[string]any{"template": t.ID, "skill": sk}, err
		},
	}, deletePartTool("delete_template_skill", "Remove a template's skill", "Remove a skill (its whole folder) from a template.",
		"name", "The skill's name.", (*template.Service).DeleteSkill), {
		name: "upsert_template_schedule", title: "Add or change a template's scheduled task", idempotent: true,
		description: "Add a scheduled task to a template, or change the one with the same name (only the arguments given change). Installed agents get it paused until the person turns it on. " +
			"kind is cron (a 5-field expression such as \"0 9 * * 1-5\", or @hourly, @daily, @weekly, @monthly, @yearly) or once (at: an RFC 3339 date-time); it defaults to once when at is given, else cron. " +
			"timezone is an IANA name such as Europe/Berlin; leave it empty to use the zone of whoever installs it. catch_up is once (default) or skip.",
		schema: `{"type":"object","properties":{` + templateRef + `,` +
			`"name":{"type":"string","description":"The task's name, e.g. Morning digest; it identifies the task in the template."},` +
			`"instruction":{"type":"string","description":"What the agent does each time, as a message to it."},` +
			`"kind":{"type":"string","enum":["cron","once"]},` +
			`"cron":{"type":"string"},"timezone":{"type":"string"},` +
			`"at":{"type":"string","description":"For kind once: RFC 3339, e.g. 2026-12-24T09:00:00+01:00."},` +
			`"catch_up":{"type":"string","enum":["once","skip"]}},"required":["template","name"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			var in struct {
				Template    string     `json:"template"`
				Name        string     `json:"name"`
				Instruction *string    `json:"instruction"`
				Kind        *string    `json:"kind"`
				Cron        *string    `json:"cron"`
				Timezone    *string    `json:"timezone"`
				At          *time.Time `json:"at"`
				CatchUp     *string    `json:"catch_up"`
			}
			if err := decode(args, &in); err != nil {
				return nil, err
			}
			t, err := findTemplate(ctx, w, in.Template)
			if err != nil {
				return nil, err
			}
			sch := template.Schedule{Name: in.Name}
			created := true
			for _, x := range t.Schedules {
				if strings.EqualFold(x.Name, strings.TrimSpace(in.Name)) {
					sch, created = x, false
				}
			}
			if created && in.Instruction == nil {
				return nil, fault.Invalid("instruction: a new scheduled task needs one: what the agent does each time")
			}
			if in.Kind == nil && (in.Cron != nil || in.At != nil) {
				sch.Kind = "" // decided again from what is given
				if in.Cron != nil {
					sch.At = nil
				}
			}
			sch.Instruction = orElse(in.Instruction, sch.Instruction)
			sch.Kind = orElse(in.Kind, sch.Kind)
			sch.Cron = orElse(in.Cron, sch.Cron)
			sch.Timezone = orElse(in.Timezone, sch.Timezone)
			sch.CatchUp = orElse(in.CatchUp, sch.CatchUp)
			if in.At != nil {
				sch.At = in.At
			}
			got, err := w.Templates.UpsertSchedule(ctx, t.ID, sch)
			return map[string]any{"template": t.ID, "schedule": got, "created": created}, err
		},
	}, deletePartTool("delete_template_schedule", "Remove a template's scheduled task", "Remove a scheduled task from a template, by its name.",
		"name", "The task's name.", (*template.Service).DeleteSchedule), {
		name: "upsert_template_file", title: "Add or change a template's file", idempotent: true,
		description: "Write a text file into the template's files/ (the installed agent's own folder): a path such as notes/faq.md and its content. " +
			"Text that looks like a credential is refused: write ${NAME} and list the name under variables instead.",
		schema: `{"type":"object","properties":{` + templateRef + `,` +
			`"path":{"type":"string","description":"Relative path under files/, e.g. notes/faq.md."},` +
			`"content":{"type":"string","description":"The file's text."}},"required":["template","path","content"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			var in struct{ Template, Path, Content string }
			if err := decode(args, &in); err != nil {
				return nil, err
			}
			t, err := findTemplate(ctx, w, in.Template)
			if err != nil {
				return nil, err
			}
			if err := w.Templates.UpsertFile(ctx, t.ID, in.Path, []byte(in.Content)); err != nil {
				return nil, err
			}
			return map[string]any{"template": t.ID, "path": in.Path, "bytes": len(in.Content)}, nil
		},
	}, deletePartTool("delete_template_file", "Remove a template's file", "Remove a file from the template's files/.",
		"path", "The path under files/.", (*template.Service).DeleteFile), {
		name: "submit_template", title: "Submit a template",
		description: "Check a template as an import would (format, schema, no credentials, a description and a soul) and mark it submitted. " +
			"Submitting does not publish it: " + templatePublishing,
		schema: `{"type":"object","properties":{` + templateRef + `},"required":["template"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			t, err := templateOnly(ctx, w, args)
			if err != nil {
				return nil, err
			}
			t, err = w.Templates.Submit(ctx, t.ID)
			if err != nil {
				return nil, err
			}
			return map[string]any{"template": toSummary(t), "next": templatePublishing}, nil
		},
	}}
}

// deletePartTool is a tool removing one part of a template: a skill or a
// scheduled task by its name, or a file by its path (arg).
func deletePartTool(name, title, description, arg, argHelp string, del func(*template.Service, context.Context, string, string) error) toolDef {
	return toolDef{
		name: name, title: title, description: description, destructive: true, idempotent: true,
		schema: `{"type":"object","properties":{` + templateRef + `,"` + arg + `":{"type":"string","description":"` + argHelp + `"}},` +
			`"required":["template","` + arg + `"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			var in struct{ Template, Name, Path string }
			if err := decode(args, &in); err != nil {
				return nil, err
			}
			part, other := in.Name, in.Path
			if arg == "path" {
				part, other = in.Path, in.Name
			}
			if other != "" {
				return nil, fault.Invalid("unknown argument; %s takes template and %s (see its input schema)", name, arg)
			}
			t, err := findTemplate(ctx, w, in.Template)
			if err != nil {
				return nil, err
			}
			if err := del(w.Templates, ctx, t.ID, part); err != nil {
				return nil, err
			}
			return map[string]any{"template": t.ID, "deleted": part}, nil
		},
	}
}

// templateOnly decodes {template} and finds it.
func templateOnly(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (template.Template, error) {
	var in struct {
		Template string `json:"template"`
	}
	if err := decode(args, &in); err != nil {
		return template.Template{}, err
	}
	return findTemplate(ctx, w, in.Template)
}

// fileAnswer shows a text file; a binary one only by size.
func fileAnswer(path string, b []byte, extra map[string]any) (any, error) {
	if !utf8.Valid(b) {
		return nil, fault.Invalid("%s is a binary file (%d bytes); only text files are shown here", path, len(b))
	}
	out := map[string]any{"file": path, "content": string(b)}
	for k, v := range extra {
		out[k] = v
	}
	return out, nil
}

// orElse is *p, or def when p is nil.
func orElse[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
