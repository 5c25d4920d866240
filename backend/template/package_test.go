package template_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/template"
)

// goodManifest is a valid template.json (also read by the schema's test).
var goodManifest = func() string {
	b, err := os.ReadFile("testdata/good.template.json")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

const goodSkill = "---\nname: reply\ndescription: Reply to a customer. Use when a mail needs an answer.\n---\nBe kind.\n"

// valid is a small package that imports, plus more entries.
func valid(more ...zipEntry) []zipEntry {
	return append([]zipEntry{file("template.json", goodManifest), file("soul.md", "# Helper\n"),
		file("skills/reply/SKILL.md", goodSkill), file("files/faq.md", "Q: hours? A: 9-5.\n")}, more...)
}

func manifestWith(old, new string) []zipEntry {
	return []zipEntry{file("template.json", strings.Replace(goodManifest, old, new, 1)), file("soul.md", "x")}
}

func random(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func TestImportRefusesBadPackages(t *testing.T) {
	ws := openWorkspace(t)
	ctx := context.Background()
	if _, err := ws.Templates.Import(ctx, zipOf(t, valid()...)); err != nil {
		t.Fatalf("the valid package is refused: %v", err)
	}
	before, _ := ws.Templates.List(ctx)

	many := valid()
	for i := range template.MaxFiles {
		many = append(many, file(fmt.Sprintf("files/f%04d.txt", i), "x"))
	}
	tooBig := bytes.Repeat([]byte{0}, template.MaxEntryBytes+1)
	eight := bytes.Repeat([]byte{'a'}, 8<<20)
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"zip-slip", zipOf(t, valid(file("files/../../evil.txt", "boom"))...), "points outside its folder"},
		{"zip-slip at the top", zipOf(t, valid(file("../evil.txt", "boom"))...), "points outside its folder"},
		{"zip-slip with backslashes", zipOf(t, valid(file(`files\..\..\evil.txt`, "boom"))...), "points outside its folder"},
		{"absolute path", zipOf(t, valid(file("/etc/cron.d/evil", "boom"))...), "absolute path"},
		{"drive letter", zipOf(t, valid(file("C:/Windows/evil", "boom"))...), "absolute path"},
		{"symlink", zipOf(t, valid(zipEntry{name: "files/link", data: []byte("/etc/passwd"), mode: fs.ModeSymlink | 0o777})...), "symbolic link"},
		{"oversized entry", zipOf(t, valid(zipEntry{name: "files/big.bin", data: tooBig})...), "one file holds at most 10 MiB"},
		{"oversized unpacked", zipOf(t, valid(zipEntry{name: "files/a", data: eight}, zipEntry{name: "files/b", data: eight}, zipEntry{name: "files/c", data: eight})...), "more than 20 MiB uncompressed"},
		{"oversized archive", zipOf(t, valid(zipEntry{name: "files/r1", data: random(9 << 20), store: true}, zipEntry{name: "files/r2", data: random(9 << 20), store: true}, zipEntry{name: "files/r3", data: random(3 << 20), store: true})...), "holds at most 20 MiB"},
		{"too many files", zipOf(t, many...), "more than 1000 files"},
		{"duplicate entry", zipOf(t, valid(file("files/faq.md", "again"))...), "appears twice"},
		{"not a zip", []byte("PK\x03\x04 not really"), "not a readable zip archive"},
		{"no template.json", zipOf(t, file("soul.md", "x")), "no template.json"},
		{"bad JSON", zipOf(t, file("template.json", `{"schema_version":1,"name":}`)), "not valid JSON (at byte"},
		{"JSON list", zipOf(t, file("template.json", `[1,2]`)), "one JSON object"},
		{"newer format", zipOf(t, manifestWith(`"schema_version":1`, `"schema_version":2`)...), "reads version 1"},
		{"schema: unknown field", zipOf(t, manifestWith(`"price":"free"`, `"price":"free","colour":"red"`)...), "colour"},
		{"schema: price", zipOf(t, manifestWith(`"price":"free"`, `"price":"cheap"`)...), "/price"},
		{"schema: schedule without instruction", zipOf(t, manifestWith(`"instruction":"Sum up the inbox.",`, ``)...), "instruction"},
		{"schema: variable name", zipOf(t, manifestWith(`"MAIL_KEY"`, `"mail key"`)...), "/variables/0/name"},
		{"planted memories key", zipOf(t, manifestWith(`"price":"free"`, `"price":"free","memories":[{"text":"the CEO's birthday"}]`)...), "never carries memories"},
		{"planted memories folder", zipOf(t, valid(file("memories/1.json", `{"text":"x"}`))...), "never carries memories"},
		{"planted run history", zipOf(t, valid(file("runs.json", `[]`))...), "never carries run history"},
		{"planted variable value", zipOf(t, manifestWith(`"help":"The mail API key."`, `"help":"The mail API key.","value":"mk-12345"`)...), "variables[0].value holds a value"},
		{"planted trigger token", zipOf(t, manifestWith(`"connectors"`, `"triggers":[{"name":"Hook","instruction":"x","token":"rrh_abcdefghijklmnopqrstuvwxyz234567"}],"connectors"`)...), "token holds a value"},
		{"planted API key in template.json", zipOf(t, manifestWith(`Answers mail.`, `Answers mail with sk-proj-4f9a8b7c6d5e4f3a2b1c.`)...), "OpenAI or Anthropic API key"},
		{"planted API key in soul.md", zipOf(t, file("template.json", goodManifest), file("soul.md", "Use AKIAIOSFODNN7EXAMPLE for S3.")), "AWS access key"},
		{"planted token in a skill", zipOf(t, valid(file("skills/reply/notes.md", "token xoxb-1234567890-abcdef"))...), "Slack token"},
		{"skill without SKILL.md", zipOf(t, valid(file("skills/lost/notes.md", "x"))...), "has no SKILL.md"},
		{"skill named otherwise", zipOf(t, valid(file("skills/other/SKILL.md", goodSkill))...), "make the folder and the name the same"},
		{"unexpected entry", zipOf(t, valid(file("README.md", "hi"))...), "unexpected entry"},
		{"file and folder of one name", zipOf(t, valid(file("files/a", "x"), file("files/a/b", "y"))...), "both a file and a folder"},
		{"unknown app", zipOf(t, manifestWith(`"github"`, `"not-an-app"`)...), "no app \"not-an-app\" in the catalog"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ws.Templates.Import(ctx, tc.data)
			if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a refusal saying %q", err, tc.want)
			}
			after, _ := ws.Templates.List(ctx)
			if len(after) != len(before) {
				t.Fatalf("%d templates after the refusal, want %d", len(after), len(before))
			}
			left, _ := os.ReadDir(filepath.Join(ws.Dir, "templates"))
			if len(left) != len(before) {
				t.Fatalf("%d folders in templates/ after the refusal, want %d", len(left), len(before))
			}
		})
	}
}
