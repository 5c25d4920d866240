package tool

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/memory"
	"github.com/rerun-build/rerun-desktop/backend/skill"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/store/storetest"
)

// storesEnv is testEnv with real memory and skill services over a fresh
// workspace database holding agents a1 (the env's) and a2.
func storesEnv(t *testing.T) (*Env, *memory.Service, *skill.Service) {
	t.Helper()
	env := testEnv(t)
	db := storetest.Open(t)
	ctx := context.Background()
	now := store.FormatTime(time.Now())
	if _, err := db.ExecContext(ctx, `INSERT INTO boxes (id, name, position, created_at) VALUES ('bx_1', 'Box', 0, ?)`, now); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a1", "a2"} {
		if _, err := db.ExecContext(ctx, `INSERT INTO agents (id, name, handle, box_id, created_at, updated_at)
			VALUES (?, ?, ?, 'bx_1', ?, ?)`, id, id, id, now, now); err != nil {
			t.Fatal(err)
		}
	}
	mem, err := memory.New(db, memory.Config{})
	if err != nil {
		t.Fatal(err)
	}
	sk := skill.New(db, skill.Config{AgentsDir: filepath.Join(filepath.Dir(filepath.Dir(env.FilesDir)))})
	env.Memories, env.Skills = mem, sk
	env.RunID, env.Step = "run_7", func() int { return 4 }
	return env, mem, sk
}

func TestRemember(t *testing.T) {
	tests := []struct {
		name  string
		prior []string // remembered first, in order
		input func(ids []string) map[string]any
		want  []string // substrings of the reply
		err   string
	}{
		{"stores a fact", nil, func([]string) map[string]any {
			return map[string]any{"text": "The invoice folder is shared/invoices."}
		}, []string{"remembered [mem_", "The invoice folder is shared/invoices."}, ""},
		{"same words reinforce", []string{"Ada prefers short answers."}, func([]string) map[string]any {
			return map[string]any{"text": "ada prefers short answers"}
		}, []string{"already known, reinforced: [mem_", "Ada prefers short answers."}, ""},
		{"replaces says what", []string{"The deploy day is Friday."}, func(ids []string) map[string]any {
			return map[string]any{"text": "Deploys happen on Thursdays now.", "replaces": ids[0]}
		}, []string{"remembered [mem_", `it replaces [`, `"The deploy day is Friday."`}, ""},
		{"a close memory is named, not replaced", []string{"The weekly report goes to Maria every Monday morning."}, func(ids []string) map[string]any {
			return map[string]any{"text": "The weekly report goes to Maria every Tuesday morning."}
		}, []string{"remembered [mem_", "close to [", "near-duplicate", "both are kept", "replaces:"}, ""},
		{"empty", nil, func([]string) map[string]any { return map[string]any{"text": "  "} }, nil, "text is empty"},
		{"unknown replaces", nil, func([]string) map[string]any {
			return map[string]any{"text": "x y z", "replaces": "mem_nope"}
		}, nil, `no memory "mem_nope" of this agent`},
		{"unknown argument", nil, func([]string) map[string]any { return map[string]any{"fact": "x"} }, nil, `unknown field "fact"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, mem, _ := storesEnv(t)
			var ids []string
			for _, p := range tt.prior {
				r, err := mem.Remember(context.Background(), "a1", p, memory.Source{}, memory.RememberOptions{})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, r.Memory.ID)
			}
			got, err := call(t, env, "remember", tt.input(ids))
			if tt.err != "" {
				wantErr(t, err, nil, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("got %q, want it to contain %q", got, w)
				}
			}
		})
	}
	t.Run("records the run and step", func(t *testing.T) {
		env, mem, _ := storesEnv(t)
		mustCall(t, env, "remember", map[string]any{"text": "Maria owns the budget."})
		list, err := mem.List(context.Background(), "a1", memory.ListOptions{})
		if err != nil || len(list) != 1 {
			t.Fatalf("list = %v, %v; want one memory", list, err)
		}
		if got := list[0].Source; got != (memory.Source{RunID: "run_7", Step: 4}) {
			t.Errorf("got source %+v, want run_7#4", got)
		}
	})
	t.Run("not available", func(t *testing.T) {
		_, err := call(t, testEnv(t), "remember", map[string]any{"text": "x"})
		wantErr(t, err, invalid, "memory is not available")
	})
}

func TestRecallAndForget(t *testing.T) {
	env, mem, _ := storesEnv(t)
	ctx := context.Background()
	r1, _ := mem.Remember(ctx, "a1", "The staging database lives on host db-stage-2.", memory.Source{}, memory.RememberOptions{})
	mem.Remember(ctx, "a1", "Maria likes tea.", memory.Source{}, memory.RememberOptions{})
	other, _ := mem.Remember(ctx, "a2", "The staging password rotates monthly.", memory.Source{}, memory.RememberOptions{})

	recallTests := []struct {
		name    string
		input   map[string]any
		want    string
		notWant string
		err     string
	}{
		{"finds by keywords, with id and strength", map[string]any{"query": "staging database"}, "[" + r1.Memory.ID + "] The staging database lives on host db-stage-2. (strength 1.00)", "Maria", ""},
		{"only this agent's", map[string]any{"query": "staging password", "k": 3}, "db-stage-2", "rotates", ""},
		{"nothing", map[string]any{"query": "kubernetes"}, "you remember nothing about that", "", ""},
		{"empty query", map[string]any{"query": ""}, "", "", "query is empty"},
		{"k too large", map[string]any{"query": "x", "k": 21}, "", "", "k is 21; ask for 1 to 20"},
	}
	for _, tt := range recallTests {
		t.Run("recall/"+tt.name, func(t *testing.T) {
			got, err := call(t, env, "recall", tt.input)
			if tt.err != "" {
				wantErr(t, err, invalid, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(got, tt.want) || (tt.notWant != "" && strings.Contains(got, tt.notWant)) {
				t.Errorf("got %q, want %q and not %q", got, tt.want, tt.notWant)
			}
		})
	}
	if m, _ := mem.Get(ctx, r1.Memory.ID); m.Recalls == 0 {
		t.Errorf("got %d recalls after recall, want the recall to reinforce", m.Recalls)
	}

	forgetTests := []struct {
		name, id, want, err string
	}{
		{"another agent's memory is not found", other.Memory.ID, "", "no memory"},
		{"unknown", "mem_nope", "", "no memory"},
		{"empty", "", "", "id is empty"},
		{"forgets", r1.Memory.ID, "forgot [" + r1.Memory.ID + "] The staging database lives on host db-stage-2.", ""},
		{"twice", r1.Memory.ID, "", "no memory"},
	}
	for _, tt := range forgetTests {
		t.Run("forget/"+tt.name, func(t *testing.T) {
			got, err := call(t, env, "forget", map[string]any{"id": tt.id})
			if tt.err != "" {
				wantErr(t, err, nil, tt.err)
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if _, err := mem.Get(ctx, other.Memory.ID); err != nil {
		t.Errorf("another agent's memory: %v, want it kept", err)
	}
}

const testSkillMD = "---\nname: pdf-forms\ndescription: Fill PDF forms. Use when a form must be filled.\nlicense: MIT\n---\n# Steps\n1. Read reference/fields.md.\n"

func TestSkillTools(t *testing.T) {
	env, _, sk := storesEnv(t)
	ctx := context.Background()
	if _, err := sk.Upsert(ctx, "a1", "pdf-forms", testSkillMD, map[string][]byte{"reference/fields.md": []byte("name, date"), "logo.png": {0xff, 0xd8, 0x00}}); err != nil {
		t.Fatal(err)
	}
	if _, err := sk.Upsert(ctx, "a2", "secret-skill", "---\nname: secret-skill\ndescription: Not yours.\n---\nx\n", nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		tool  string
		input map[string]any
		want  []string
		err   string
		kind  error
	}{
		{"list", "list_skills", map[string]any{}, []string{"pdf-forms: Fill PDF forms. Use when a form must be filled."}, "", nil},
		{"load returns body and files", "load_skill", map[string]any{"name": "pdf-forms"}, []string{"# Skill pdf-forms", "1. Read reference/fields.md.", "- logo.png\n- reference/fields.md"}, "", nil},
		{"load unknown", "load_skill", map[string]any{"name": "nope"}, nil, `no skill "nope"`, fault.ErrNotFound},
		{"load another agent's", "load_skill", map[string]any{"name": "secret-skill"}, nil, `no skill "secret-skill"`, fault.ErrNotFound},
		{"load bad name", "load_skill", map[string]any{"name": "../x"}, nil, "may hold only lowercase letters", fault.ErrInvalid},
		{"read file", "read_skill_file", map[string]any{"name": "pdf-forms", "path": "reference/fields.md"}, []string{"name, date"}, "", nil},
		{"read file escaping", "read_skill_file", map[string]any{"name": "pdf-forms", "path": "../../files/x"}, nil, "leaves the skill folder", fault.ErrInvalid},
		{"read binary file", "read_skill_file", map[string]any{"name": "pdf-forms", "path": "logo.png"}, nil, "binary file", fault.ErrInvalid},
		{"read missing file", "read_skill_file", map[string]any{"name": "pdf-forms", "path": "nope.md"}, nil, `has no file "nope.md"`, fault.ErrNotFound},
		{"upsert new", "upsert_skill", map[string]any{"name": "weekly-report", "skill_md": "---\nname: weekly-report\ndescription: Write the weekly report.\n---\nCollect, then write.\n"}, []string{"skill weekly-report saved", "weekly-report: Write the weekly report."}, "", nil},
		{"upsert name mismatch", "upsert_skill", map[string]any{"name": "other", "skill_md": testSkillMD}, nil, `names the skill "pdf-forms", not "other"`, fault.ErrInvalid},
		{"upsert without front matter", "upsert_skill", map[string]any{"name": "x", "skill_md": "just text"}, nil, "must start with YAML front matter", fault.ErrInvalid},
		{"upsert empty", "upsert_skill", map[string]any{"name": "x", "skill_md": ""}, nil, "skill_md is empty", fault.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := call(t, env, tt.tool, tt.input)
			if tt.err != "" {
				wantErr(t, err, tt.kind, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("got %q, want it to contain %q", got, w)
				}
			}
		})
	}
	t.Run("upsert keeps versions", func(t *testing.T) {
		improved := strings.Replace(testSkillMD, "1. Read", "1. First read", 1)
		mustCall(t, env, "upsert_skill", map[string]any{"name": "pdf-forms", "skill_md": improved})
		vs, err := sk.Versions(ctx, "a1", "pdf-forms")
		if err != nil || len(vs) != 2 || vs[0].Body != improved || vs[1].Body != testSkillMD {
			t.Errorf("got %d versions (%v), want the improved one over the first", len(vs), err)
		}
	})
	t.Run("not available", func(t *testing.T) {
		_, err := call(t, testEnv(t), "list_skills", map[string]any{})
		wantErr(t, err, invalid, "skills are not available")
	})
}
