package skill_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/skill"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/store/storetest"
)

const pdfSkill = `---
name: pdf-forms
description: Fill in PDF forms. Use when the user asks to complete, sign or
  flatten a PDF form.
license: Apache-2.0
allowed-tools: [bash, read]
metadata:
  version: "1.2"
---
# PDF forms

1. Run scripts/fill.py with the field values.
2. Read reference/fields.md for the field names.
`

func TestParse(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		wantName string
		wantDesc string
		wantBody string
		wantErr  string
	}{
		{"full", pdfSkill, "pdf-forms", "Fill in PDF forms. Use when the user asks to complete, sign or flatten a PDF form.", "# PDF forms\n\n1. Run scripts/fill.py with the field values.\n2. Read reference/fields.md for the field names.\n", ""},
		{"crlf and bom", "\uFEFF---\r\nname: a\r\ndescription: b\r\n---\r\nbody\r\n", "a", "b", "body\r\n", ""},
		{"no body", "---\nname: a\ndescription: b\n---", "a", "b", "", ""},
		{"no front matter", "# Just markdown\n", "", "", "", "must start with YAML front matter"},
		{"unclosed", "---\nname: a\ndescription: b\n", "", "", "", "no closing ---"},
		{"missing name", "---\ndescription: b\n---\n", "", "", "", "needs a name"},
		{"missing description", "---\nname: a\n---\n", "", "", "", "needs a description"},
		{"blank description", "---\nname: a\ndescription: '  '\n---\n", "", "", "", "needs a description"},
		{"uppercase name", "---\nname: PDF\ndescription: b\n---\n", "", "", "", "lowercase letters"},
		{"double hyphen", "---\nname: a--b\ndescription: b\n---\n", "", "", "", "single hyphens"},
		{"leading hyphen", "---\nname: -a\ndescription: b\n---\n", "", "", "", "single hyphens"},
		{"long name", "---\nname: " + strings.Repeat("a", 65) + "\ndescription: b\n---\n", "", "", "", "longer than 64"},
		{"long description", "---\nname: a\ndescription: " + strings.Repeat("d", 1025) + "\n---\n", "", "", "", "longer than 1024"},
		{"name not text", "---\nname: [a]\ndescription: b\n---\n", "", "", "", "must be text"},
		{"not a mapping", "---\n- a\n---\n", "", "", "", "must be YAML fields"},
		{"bad yaml", "---\nname: a\n  description: : b\n---\n", "", "", "", "not valid YAML"},
		{"duplicate key", "---\nname: a\nname: b\ndescription: c\n---\n", "", "", "", "already defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := skill.Parse([]byte(tt.in))
			if tt.wantErr != "" {
				if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an invalid error saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != tt.wantName || s.Description != tt.wantDesc || s.Body != tt.wantBody {
				t.Errorf("got %q / %q / %q, want %q / %q / %q", s.Name, s.Description, s.Body, tt.wantName, tt.wantDesc, tt.wantBody)
			}
		})
	}
}

func TestRenderKeepsOtherFields(t *testing.T) {
	s, err := skill.Parse([]byte(pdfSkill))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := skill.Render(s)
	if string(out) != pdfSkill {
		t.Errorf("unchanged skill: got\n%s\nwant it verbatim", out)
	}
	s.Description = "Fill PDF forms."
	out, err = skill.Render(s)
	if err != nil {
		t.Fatal(err)
	}
	again, err := skill.Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if again.Description != "Fill PDF forms." || again.Body != s.Body ||
		!strings.Contains(again.FrontMatter, "license: Apache-2.0") || !strings.Contains(again.FrontMatter, `version: "1.2"`) {
		t.Errorf("edited description: got\n%s", out)
	}
	if _, err := skill.Render(skill.Skill{Name: "Bad Name", Description: "x"}); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("render a bad name: got %v, want invalid", err)
	}
	fresh, err := skill.Render(skill.Skill{Name: "new-one", Description: "Does: things", Body: "Hi\n"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := skill.Parse(fresh); err != nil || got.Description != "Does: things" {
		t.Errorf("render from fields: got %+v, %v", got, err)
	}
}

// FuzzParse: Parse never panics, and whatever it accepts renders back to a
// SKILL.md that parses to the same skill.
func FuzzParse(f *testing.F) {
	for _, s := range []string{pdfSkill, "---\nname: a\ndescription: b\n---\n", "---\r\nname: a\r\ndescription: 'x: y'\r\n---", "---\n---\n", "", "---\nname: a\ndescription: |\n  ---\n---\nx"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := skill.Parse(data)
		if err != nil {
			return
		}
		out, err := skill.Render(s)
		if err != nil {
			t.Fatalf("render of a parsed skill: %v", err)
		}
		again, err := skill.Parse(out)
		if err != nil {
			t.Fatalf("rendered skill does not parse: %v\n%q", err, out)
		}
		if !reflect.DeepEqual(again, s) {
			t.Fatalf("round trip: got %+v, want %+v", again, s)
		}
	})
}

type fixture struct {
	db  *store.DB
	svc *skill.Service
	dir string
	now time.Time
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	db := storetest.Open(t)
	ctx := context.Background()
	now := store.FormatTime(time.Now())
	if _, err := db.ExecContext(ctx, `INSERT INTO boxes (id, name, position, created_at) VALUES ('bx_1', 'Box', 0, ?)`, now); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO agents (id, name, handle, box_id, created_at, updated_at) VALUES ('ag_a', 'A', 'a', 'bx_1', ?, ?)`, now, now); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "agents")
	return &fixture{db: db, svc: skill.New(db, skill.Config{AgentsDir: dir}), dir: dir}
}

func md(name, desc, body string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\n---\n%s", name, desc, body)
}

func TestIndexAndLoad(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	if idx, err := f.svc.Index(ctx, "ag_a"); err != nil || idx != "" {
		t.Fatalf("empty index: got %q, %v", idx, err)
	}
	if _, err := f.svc.Upsert(ctx, "ag_a", "pdf-forms", pdfSkill, map[string][]byte{
		"scripts/fill.py":     []byte("print('fill')\n"),
		"reference/fields.md": []byte("# Fields\n"),
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Upsert(ctx, "ag_a", "brand-voice", md("brand-voice", "Write in our brand voice.", "Be brief.\n"), nil); err != nil {
		t.Fatal(err)
	}
	// A hand-broken skill shows in the list with its error, not in the index.
	broken := filepath.Join(f.dir, "ag_a", "skills", "broken")
	os.MkdirAll(broken, 0o700)
	os.WriteFile(filepath.Join(broken, "SKILL.md"), []byte("no front matter"), 0o600)

	idx, err := f.svc.Index(ctx, "ag_a")
	if err != nil {
		t.Fatal(err)
	}
	want := "brand-voice: Write in our brand voice.\n" +
		"pdf-forms: Fill in PDF forms. Use when the user asks to complete, sign or flatten a PDF form.\n"
	if idx != want {
		t.Errorf("index: got\n%q\nwant\n%q", idx, want)
	}
	list, _ := f.svc.List(ctx, "ag_a")
	if len(list) != 3 || list[1].Name != "broken" || list[1].Error == "" {
		t.Errorf("list: got %+v, want 3 with broken flagged", list)
	}

	l, err := f.svc.Load(ctx, "ag_a", "pdf-forms")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(l.Body, "# PDF forms") || !reflect.DeepEqual(l.Files, []string{"reference/fields.md", "scripts/fill.py"}) {
		t.Errorf("load: got body %q files %v", l.Body, l.Files)
	}
	if _, err := f.svc.Load(ctx, "ag_a", "nope"); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("load missing: got %v, want not found", err)
	}
}

func TestReadFileJail(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	if _, err := f.svc.Upsert(ctx, "ag_a", "pdf-forms", pdfSkill, map[string][]byte{"reference/fields.md": []byte("# Fields\n")}); err != nil {
		t.Fatal(err)
	}
	skillDir := filepath.Join(f.dir, "ag_a", "skills", "pdf-forms")
	secret := filepath.Join(f.dir, "secret.txt")
	os.WriteFile(secret, []byte("secret"), 0o600)
	if err := os.Symlink(secret, filepath.Join(skillDir, "escape.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("reference/fields.md", filepath.Join(skillDir, "inside.md")); err != nil {
		t.Fatal(err)
	}
	if got, err := f.svc.ReadFile(ctx, "ag_a", "pdf-forms", "reference/fields.md"); err != nil || string(got) != "# Fields\n" {
		t.Errorf("read: got %q, %v", got, err)
	}
	if got, err := f.svc.ReadFile(ctx, "ag_a", "pdf-forms", "inside.md"); err != nil || string(got) != "# Fields\n" {
		t.Errorf("symlink inside: got %q, %v", got, err)
	}
	refused := []struct{ path, want string }{
		{"../../secret.txt", "leaves the skill folder"},
		{"reference/../../x", "leaves the skill folder"},
		{"..\\..\\secret.txt", "leaves the skill folder"},
		{"/etc/passwd", "relative"},
		{secret, "relative"},
		{"escape.txt", "leads out"},
		{"reference", "not a file"},
		{"", "empty"},
	}
	for _, r := range refused {
		t.Run(r.path, func(t *testing.T) {
			got, err := f.svc.ReadFile(ctx, "ag_a", "pdf-forms", r.path)
			if err == nil || !strings.Contains(err.Error(), r.want) {
				t.Errorf("got %q, %v; want an error saying %q", got, err, r.want)
			}
		})
	}
	if _, err := f.svc.ReadFile(ctx, "ag_a", "pdf-forms", "missing.md"); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("missing file: got %v, want not found", err)
	}
	if _, err := f.svc.ReadFile(ctx, "../x", "pdf-forms", "a"); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("bad agent id: got %v, want invalid", err)
	}
}

func TestUpsertKeepsVersions(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	v1 := md("notes", "Take notes.", "v1\n")
	v2 := md("notes", "Take better notes.", "v2\n")
	for _, s := range []string{v1, v1, v2} { // the same text twice is one version
		if _, err := f.svc.Upsert(ctx, "ag_a", "notes", s, map[string][]byte{"a.md": []byte("A")}); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := f.svc.Versions(ctx, "ag_a", "notes")
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || vs[0].Version != 2 || vs[0].Body != v2 || vs[1].Body != v1 {
		t.Fatalf("versions: got %+v, want v2 then v1", vs)
	}
	// Reference files not named are kept; nil deletes.
	f.svc.Upsert(ctx, "ag_a", "notes", v2, map[string][]byte{"b.md": []byte("B")})
	l, _ := f.svc.Load(ctx, "ag_a", "notes")
	if !reflect.DeepEqual(l.Files, []string{"a.md", "b.md"}) {
		t.Errorf("files after merge: got %v", l.Files)
	}
	f.svc.Upsert(ctx, "ag_a", "notes", v2, map[string][]byte{"a.md": nil})
	if l, _ = f.svc.Load(ctx, "ag_a", "notes"); !reflect.DeepEqual(l.Files, []string{"b.md"}) {
		t.Errorf("files after delete: got %v", l.Files)
	}
	if err := f.svc.Delete(ctx, "ag_a", "notes"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Load(ctx, "ag_a", "notes"); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("after delete: got %v, want not found", err)
	}
	if vs, _ := f.svc.Versions(ctx, "ag_a", "notes"); len(vs) != 2 {
		t.Errorf("versions after delete: got %d, want 2 kept", len(vs))
	}

	bad := []struct {
		name, skillMD string
		files         map[string][]byte
		want          string
	}{
		{"notes", md("other", "x", ""), nil, "not \"notes\""},
		{"Notes", md("Notes", "x", ""), nil, "lowercase"},
		{"notes", md("notes", "x", ""), map[string][]byte{"../x": []byte("x")}, "leaves the skill folder"},
		{"notes", md("notes", "x", ""), map[string][]byte{"SKILL.md": []byte("x")}, "as the skill's text"},
		{"notes", md("notes", "x", ""), map[string][]byte{"big": make([]byte, skill.MaxTotalBytes)}, "at most 10 MiB"},
	}
	for _, b := range bad {
		if _, err := f.svc.Upsert(ctx, "ag_a", b.name, b.skillMD, b.files); !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), b.want) {
			t.Errorf("upsert %s: got %v, want invalid saying %q", b.name, err, b.want)
		}
	}
}

type entry struct {
	name string
	body []byte
	mode os.FileMode
}

func makeZip(t testing.TB, entries ...entry) *bytes.Reader {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.mode != 0 {
			h.SetMode(e.mode)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(e.body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(b.Bytes())
}

func TestImportZip(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	// The layout of a skill downloaded from Claude: one top folder, scripts,
	// references, plus macOS litter.
	good := makeZip(t,
		entry{name: "pdf-forms-main/", mode: os.ModeDir | 0o755},
		entry{name: "pdf-forms-main/SKILL.md", body: []byte(pdfSkill)},
		entry{name: "pdf-forms-main/scripts/fill.py", body: []byte("print(1)\n")},
		entry{name: "pdf-forms-main/reference/fields.md", body: []byte("# Fields\n")},
		entry{name: "__MACOSX/pdf-forms-main/._SKILL.md", body: []byte("junk")},
		entry{name: "pdf-forms-main/.DS_Store", body: []byte("junk")},
	)
	sk, err := f.svc.ImportZip(ctx, "ag_a", good, good.Size())
	if err != nil {
		t.Fatal(err)
	}
	l, err := f.svc.Load(ctx, "ag_a", sk.Name)
	if err != nil || sk.Name != "pdf-forms" || !reflect.DeepEqual(l.Files, []string{"reference/fields.md", "scripts/fill.py"}) {
		t.Fatalf("imported: got %q files %v (%v)", sk.Name, l.Files, err)
	}
	atRoot := makeZip(t, entry{name: "SKILL.md", body: []byte(md("flat", "Flat layout.", "x"))}, entry{name: "a/b.txt", body: []byte("b")})
	if sk, err := f.svc.ImportZip(ctx, "ag_a", atRoot, atRoot.Size()); err != nil || sk.Name != "flat" {
		t.Errorf("files at root: got %q, %v", sk.Name, err)
	}

	many := []entry{{name: "SKILL.md", body: []byte(md("many", "x", ""))}}
	for i := range skill.MaxFiles {
		many = append(many, entry{name: fmt.Sprintf("f%d.txt", i), body: []byte("x")})
	}
	refused := []struct {
		name string
		zip  *bytes.Reader
		want string
	}{
		{"zip slip", makeZip(t, entry{name: "SKILL.md", body: []byte(md("a", "b", ""))}, entry{name: "../../evil.sh", body: []byte("x")}), "outside the skill folder"},
		{"nested slip", makeZip(t, entry{name: "s/SKILL.md", body: []byte(md("a", "b", ""))}, entry{name: "s/../../evil", body: []byte("x")}), "outside the skill folder"},
		{"absolute", makeZip(t, entry{name: "/etc/cron.d/x", body: []byte("x")}), "outside the skill folder"},
		{"symlink", makeZip(t, entry{name: "SKILL.md", body: []byte(md("a", "b", ""))}, entry{name: "link", body: []byte("/etc/passwd"), mode: os.ModeSymlink | 0o777}), "symbolic link"},
		{"oversized", makeZip(t, entry{name: "SKILL.md", body: []byte(md("a", "b", ""))}, entry{name: "big.bin", body: make([]byte, skill.MaxTotalBytes+1)}), "more than 10 MiB"},
		{"too many files", makeZip(t, many...), "more than 1000 files"},
		{"no SKILL.md", makeZip(t, entry{name: "x/readme.md", body: []byte("x")}), "no SKILL.md"},
		{"two top folders", makeZip(t, entry{name: "x/SKILL.md", body: []byte(md("a", "b", ""))}, entry{name: "y/z", body: []byte("x")}), "no SKILL.md"},
		{"bad SKILL.md", makeZip(t, entry{name: "SKILL.md", body: []byte("hello")}), "front matter"},
		{"not a zip", bytes.NewReader([]byte("hello")), "not a readable .zip"},
	}
	for _, r := range refused {
		t.Run(r.name, func(t *testing.T) {
			_, err := f.svc.ImportZip(ctx, "ag_a", r.zip, r.zip.Size())
			if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), r.want) {
				t.Errorf("got %v, want invalid saying %q", err, r.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(f.dir, "..", "evil.sh")); err == nil {
		t.Error("zip slip wrote outside")
	}
	list, _ := f.svc.List(ctx, "ag_a")
	if len(list) != 2 {
		t.Errorf("after refusals: got %d skills, want 2", len(list))
	}
}

func TestExportImportRoundTrip(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	files := map[string][]byte{"scripts/fill.py": []byte("print(1)\n"), "reference/fields.md": []byte("# Fields\n")}
	if _, err := f.svc.Upsert(ctx, "ag_a", "pdf-forms", pdfSkill, files); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := f.svc.ExportZip(ctx, "ag_a", "pdf-forms", &b); err != nil {
		t.Fatal(err)
	}
	zr, _ := zip.NewReader(bytes.NewReader(b.Bytes()), int64(b.Len()))
	var names []string
	for _, e := range zr.File {
		names = append(names, e.Name)
	}
	if want := []string{"pdf-forms/SKILL.md", "pdf-forms/reference/fields.md", "pdf-forms/scripts/fill.py"}; !reflect.DeepEqual(names, want) {
		t.Errorf("zip entries: got %v, want %v", names, want)
	}
	g := newFixture(t)
	if _, err := g.svc.ImportZip(ctx, "ag_a", bytes.NewReader(b.Bytes()), int64(b.Len())); err != nil {
		t.Fatal(err)
	}
	for p, want := range files {
		if got, err := g.svc.ReadFile(ctx, "ag_a", "pdf-forms", p); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: got %q, %v", p, got, err)
		}
	}
	if got, _ := g.svc.ReadFile(ctx, "ag_a", "pdf-forms", "SKILL.md"); string(got) != pdfSkill {
		t.Errorf("SKILL.md changed in the round trip")
	}
	if err := f.svc.ExportZip(ctx, "ag_a", "nope", &b); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("export missing: got %v", err)
	}
}

// BenchmarkIndex measures the prompt cost of the skill index at 50 skills.
func BenchmarkIndex50(b *testing.B) {
	ctx := context.Background()
	f := newFixture(b)
	for i := range 50 {
		name := fmt.Sprintf("skill-%02d", i)
		desc := "Handle customer refund requests; check the order, apply the refund policy and draft the reply. Use when a customer asks for money back."
		if _, err := f.svc.Upsert(ctx, "ag_a", name, md(name, desc, "Steps…\n"), nil); err != nil {
			b.Fatal(err)
		}
	}
	var idx string
	for b.Loop() {
		var err error
		if idx, err = f.svc.Index(ctx, "ag_a"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(idx)), "index-bytes")
	b.ReportMetric(float64(len(idx))/4, "index-tokens")
}

func TestSlug(t *testing.T) {
	long := strings.Repeat("ab ", 40)
	for _, tt := range []struct{ name, in, want string }{
		{"spaces and capitals", "Weekly Report", "weekly-report"},
		{"already a slug", "pdf-forms", "pdf-forms"},
		{"punctuation runs are one hyphen", "  Q3 -- sales: numbers!  ", "q3-sales-numbers"},
		{"underscores", "db_backup_v2", "db-backup-v2"},
		{"nothing usable", "¡¿?!", ""},
		{"accents are dropped", "Café Menü", "caf-men"},
		{"too long is cut at a letter", long, strings.TrimRight(strings.Repeat("ab-", 22)[:skill.MaxNameLen], "-")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := skill.Slug(tt.in)
			if got != tt.want {
				t.Errorf("Slug(%q): got %q, want %q", tt.in, got, tt.want)
			}
			if got != "" {
				if err := skill.CheckName(got); err != nil {
					t.Errorf("Slug(%q) = %q is not a valid name: %v", tt.in, got, err)
				}
			}
		})
	}
}

func TestCreateRefusesATakenName(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	v1 := md("weekly-report", "Write the weekly report.", "v1\n")
	if _, err := f.svc.Create(ctx, "ag_a", "weekly-report", v1); err != nil {
		t.Fatalf("first create: %v", err)
	}
	_, err := f.svc.Create(ctx, "ag_a", "weekly-report", md("weekly-report", "Other.", "v2\n"))
	if !errors.Is(err, fault.ErrConflict) || !strings.Contains(err.Error(), "already a skill named weekly-report") {
		t.Fatalf("second create: got %v, want a conflict naming the skill", err)
	}
	l, err := f.svc.Load(ctx, "ag_a", "weekly-report")
	if err != nil || !strings.Contains(l.Body, "v1") {
		t.Errorf("after the refused create: got %q, %v, want v1 kept", l.Body, err)
	}
}
