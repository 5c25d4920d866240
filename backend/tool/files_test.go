package tool

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// jail builds a root with a file, a folder, and symlinks pointing in, out
// and nowhere; outside is a sibling folder the root must never reach.
func jail(t testing.TB) (root, outside string) {
	base := t.TempDir()
	root = filepath.Join(base, "root")
	outside = filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "docs", "deep"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "docs", "a.md"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644)
	if runtime.GOOS != "windows" {
		links := map[string]string{
			"in-link":       filepath.Join(root, "docs"),
			"out-link":      outside,
			"out-file":      filepath.Join(outside, "secret.txt"),
			"dangling":      filepath.Join(outside, "missing.txt"),
			"rel-out":       "../outside",
			"docs/up":       "..",
			"docs/deep/esc": "../../../outside/secret.txt",
		}
		for name, target := range links {
			if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root, outside
}

func TestResolve(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlink fixtures need unix")
	}
	root, _ := jail(t)
	realRoot, _ := filepath.EvalSymlinks(root)
	tests := []struct {
		name, path string
		want       string // relative to root; "" when an error is expected
		err        string
	}{
		{"plain file", "docs/a.md", "docs/a.md", ""},
		{"new file", "new/dir/b.txt", "new/dir/b.txt", ""},
		{"root itself", ".", ".", ""},
		{"dot slash", "./docs/a.md", "docs/a.md", ""},
		{"inner dotdot stays inside", "docs/deep/../a.md", "docs/a.md", ""},
		{"symlink inside root", "in-link/a.md", "docs/a.md", ""},
		{"symlink up but inside", "docs/up/docs/a.md", "docs/a.md", ""},
		{"backslash is a name on unix", `a\..\..\x`, `a\..\..\x`, ""},
		{"dotdot prefix name", "..foo", "..foo", ""},
		{"empty", "", "", "path is empty"},
		{"absolute", "/etc/passwd", "", "is absolute"},
		{"dotdot escape", "../outside/secret.txt", "", "climbs out"},
		{"hidden dotdot escape", "docs/../../outside", "", "climbs out"},
		{"just dotdot", "..", "", "climbs out"},
		{"NUL byte", "a\x00b", "", "NUL byte"},
		{"symlink dir out", "out-link/secret.txt", "", "points outside"},
		{"symlink file out", "out-file", "", "points outside"},
		{"relative symlink out", "rel-out/secret.txt", "", "points outside"},
		{"new file under link out", "out-link/new.txt", "", "points outside"},
		{"nested link out", "docs/deep/esc", "", "points outside"},
		{"dangling link", "dangling", "", "cannot be followed"},
		{"file as folder", "docs/a.md/x", "docs/a.md/x", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(root, tt.path)
			if tt.err != "" {
				wantErr(t, err, fault.ErrInvalid, tt.err)
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.path, err)
			}
			want := filepath.Join(realRoot, filepath.FromSlash(tt.want))
			if got != want {
				t.Errorf("Resolve(%q) = %q, want %q", tt.path, got, want)
			}
		})
	}
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{"a", "docs/a.md", "../x", "out-link/x", "docs/up/../..", "/etc", "a/../../b", "in-link/../out-link",
		"docs/deep/esc", "dangling", `..\x`, "./././..", "docs//deep///esc/..", "\x00", "rel-out"} {
		f.Add(s)
	}
	root, _ := jail(f)
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := Resolve(root, p)
		if err != nil {
			return
		}
		if !within(realRoot, got) {
			t.Fatalf("Resolve(%q) = %q, outside %q", p, got, realRoot)
		}
		// The existing part, symlinks followed, must be inside too.
		existing := got
		for {
			if _, err := os.Lstat(existing); err == nil || existing == realRoot {
				break
			}
			existing = filepath.Dir(existing)
		}
		real, err := filepath.EvalSymlinks(existing)
		if err != nil {
			t.Fatalf("Resolve(%q) = %q, whose existing part %q does not resolve: %v", p, got, existing, err)
		}
		if !within(realRoot, real) {
			t.Fatalf("Resolve(%q) = %q, which leads to %q outside the root", p, got, real)
		}
	})
}

func TestReadFile(t *testing.T) {
	env := testEnv(t)
	writeTestFile(t, filepath.Join(env.FilesDir, "notes.md"), "hello\n")
	writeTestFile(t, filepath.Join(env.SharedDir, "team", "plan.md"), "shared plan")
	writeTestFile(t, filepath.Join(env.FilesDir, "bin.dat"), "\x00\x01\x02")
	big := strings.Repeat("x", MaxReadBytes-1) + "é" + "tail" // é straddles the cap
	writeTestFile(t, filepath.Join(env.FilesDir, "big.txt"), big)

	tests := []struct {
		name  string
		input map[string]any
		want  string
		err   string
	}{
		{"own file", map[string]any{"path": "notes.md"}, "hello\n", ""},
		{"shared file", map[string]any{"path": "shared/team/plan.md"}, "shared plan", ""},
		{"offset", map[string]any{"path": "notes.md", "offset": 2}, "llo\n", ""},
		{"binary", map[string]any{"path": "bin.dat"}, "[binary file: 3 bytes; read_file shows text only]", ""},
		{"missing", map[string]any{"path": "nope.md"}, "", `file "nope.md" does not exist`},
		{"folder", map[string]any{"path": "shared/team"}, "", "is a folder"},
		{"offset past end", map[string]any{"path": "notes.md", "offset": 99}, "", "past the end"},
		{"escape", map[string]any{"path": "../agent.db"}, "", "climbs out"},
		{"shared escape", map[string]any{"path": "shared/../../x"}, "", "climbs out"},
		{"unknown argument", map[string]any{"path": "notes.md", "lines": 3}, "", `unknown field "lines"`},
		{"wrong type", map[string]any{"path": 3}, "", `field "path" must be a string`},
		{"no path", map[string]any{}, "", "path is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := call(t, env, "read_file", tt.input)
			if tt.err != "" {
				wantErr(t, err, nil, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}

	t.Run("truncated on a character boundary, then continued", func(t *testing.T) {
		got := mustCall(t, env, "read_file", map[string]any{"path": "big.txt"})
		head := strings.Repeat("x", MaxReadBytes-1)
		wantNote := fmt.Sprintf("\n[truncated: 6 more bytes]\n(call read_file with offset %d to read on)", MaxReadBytes-1)
		if got != head+wantNote {
			t.Errorf("got ...%q, want ...%q", got[len(got)-80:], wantNote)
		}
		rest := mustCall(t, env, "read_file", map[string]any{"path": "big.txt", "offset": MaxReadBytes - 1})
		if rest != "étail" {
			t.Errorf("continued read got %q, want %q", rest, "étail")
		}
	})
}

func TestWriteAppendFile(t *testing.T) {
	env := testEnv(t)
	writeTestFile(t, filepath.Join(env.FilesDir, "dir", "keep.txt"), "k")
	tests := []struct {
		name  string
		tool  string
		input map[string]any
		want  string
		err   string
		file  string // path under the base dir to check
		body  string
	}{
		{"create with parents", "write_file", map[string]any{"path": "a/b/c.txt", "content": "one"}, "created a/b/c.txt (3 bytes)", "", "files/a/b/c.txt", "one"},
		{"replace", "write_file", map[string]any{"path": "a/b/c.txt", "content": "two"}, "replaced a/b/c.txt (3 bytes)", "", "files/a/b/c.txt", "two"},
		{"append", "append_file", map[string]any{"path": "a/b/c.txt", "content": "+3"}, "appended 2 bytes to a/b/c.txt (now 5 bytes)", "", "files/a/b/c.txt", "two+3"},
		{"append creates", "append_file", map[string]any{"path": "log/x.log", "content": "l1\n"}, "appended 3 bytes to log/x.log (now 3 bytes)", "", "files/log/x.log", "l1\n"},
		{"shared", "write_file", map[string]any{"path": "shared/out/r.md", "content": "# R"}, "created shared/out/r.md (3 bytes)", "", "shared/out/r.md", "# R"},
		{"empty content", "write_file", map[string]any{"path": "empty.txt", "content": ""}, "created empty.txt (0 bytes)", "", "files/empty.txt", ""},
		{"missing content", "write_file", map[string]any{"path": "x.txt"}, "", "content is missing", "", ""},
		{"too big", "write_file", map[string]any{"path": "x.txt", "content": strings.Repeat("x", MaxWriteBytes+1)}, "", "write_file takes at most 1048576", "", ""},
		{"append too big", "append_file", map[string]any{"path": "x.txt", "content": strings.Repeat("x", MaxWriteBytes+1)}, "", "append_file takes at most", "", ""},
		{"onto a folder", "write_file", map[string]any{"path": "dir", "content": "x"}, "", "is a folder", "", ""},
		{"the root", "write_file", map[string]any{"path": ".", "content": "x"}, "", "is the folder itself", "", ""},
		{"through a file", "write_file", map[string]any{"path": "dir/keep.txt/x", "content": "x"}, "", "is a file, not a folder", "", ""},
		{"absolute", "write_file", map[string]any{"path": "/tmp/x", "content": "x"}, "", "is absolute", "", ""},
		{"escape", "append_file", map[string]any{"path": "../x", "content": "x"}, "", "climbs out", "", ""},
	}
	base := filepath.Dir(env.SharedDir)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := call(t, env, tt.tool, tt.input)
			if tt.err != "" {
				wantErr(t, err, invalid, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			path := filepath.Join(base, filepath.FromSlash(tt.file))
			if strings.HasPrefix(tt.file, "files/") {
				path = filepath.Join(env.FilesDir, filepath.FromSlash(strings.TrimPrefix(tt.file, "files/")))
			}
			body, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(body) != tt.body {
				t.Errorf("file holds %q, want %q", body, tt.body)
			}
		})
	}
}

func TestWriteThroughSymlinkOut(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs symlinks")
	}
	env := testEnv(t)
	outside := t.TempDir()
	os.MkdirAll(env.FilesDir, 0o755)
	os.Symlink(filepath.Join(outside, "victim.txt"), filepath.Join(env.FilesDir, "dangling"))
	os.WriteFile(filepath.Join(outside, "real.txt"), []byte("keep"), 0o644)
	os.Symlink(filepath.Join(outside, "real.txt"), filepath.Join(env.FilesDir, "out-file"))
	os.Symlink(outside, filepath.Join(env.FilesDir, "out-dir"))
	for _, tool := range []string{"write_file", "append_file"} {
		for _, p := range []string{"dangling", "out-file", "out-dir/new.txt"} {
			t.Run(tool+" "+p, func(t *testing.T) {
				_, err := call(t, env, tool, map[string]any{"path": p, "content": "pwned"})
				wantErr(t, err, invalid, "symlink")
			})
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "victim.txt")); !os.IsNotExist(err) {
		t.Errorf("a file was created outside through a dangling link (stat: %v)", err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "real.txt")); string(b) != "keep" {
		t.Errorf("file outside now holds %q, want %q", b, "keep")
	}
}

func TestListFiles(t *testing.T) {
	env := testEnv(t)
	writeTestFile(t, filepath.Join(env.FilesDir, "b.txt"), "12345")
	writeTestFile(t, filepath.Join(env.FilesDir, "a", "inner.md"), "x")
	writeTestFile(t, filepath.Join(env.SharedDir, "s.csv"), "1,2")
	tests := []struct {
		name  string
		input map[string]any
		lines []string // "type size path" of each line, in order
		err   string
	}{
		{"own folder", map[string]any{}, []string{"dir - a/", "file 5 b.txt"}, ""},
		{"recursive", map[string]any{"recursive": true}, []string{"dir - a/", "file 1 a/inner.md", "file 5 b.txt"}, ""},
		{"subfolder", map[string]any{"path": "a"}, []string{"file 1 a/inner.md"}, ""},
		{"shared", map[string]any{"path": "shared"}, []string{"file 3 shared/s.csv"}, ""},
		{"shared slash", map[string]any{"path": "shared/"}, []string{"file 3 shared/s.csv"}, ""},
		{"a file", map[string]any{"path": "b.txt"}, []string{"file 5 b.txt"}, ""},
		{"missing", map[string]any{"path": "zzz"}, nil, `folder "zzz" does not exist`},
		{"escape", map[string]any{"path": ".."}, nil, "climbs out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := call(t, env, "list_files", tt.input)
			if tt.err != "" {
				wantErr(t, err, nil, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
				f := strings.Fields(l) // type size mtime path
				if len(f) != 4 {
					t.Fatalf("line %q has %d fields, want 4", l, len(f))
				}
				if !strings.HasSuffix(f[2], "Z") {
					t.Errorf("mtime %q is not UTC RFC 3339", f[2])
				}
				lines = append(lines, f[0]+" "+f[1]+" "+f[3])
			}
			if strings.Join(lines, "|") != strings.Join(tt.lines, "|") {
				t.Errorf("got %q, want %q", lines, tt.lines)
			}
		})
	}
	t.Run("empty", func(t *testing.T) {
		os.MkdirAll(filepath.Join(env.FilesDir, "void"), 0o755)
		if got := mustCall(t, env, "list_files", map[string]any{"path": "void"}); got != "void is empty" {
			t.Errorf("got %q, want %q", got, "void is empty")
		}
	})
	t.Run("capped", func(t *testing.T) {
		for i := range maxListEntries + 5 {
			writeTestFile(t, filepath.Join(env.FilesDir, "many", fmt.Sprintf("f%04d", i)), "")
		}
		got := mustCall(t, env, "list_files", map[string]any{"path": "many"})
		if n := strings.Count(got, "\nfile ") + 1; n != maxListEntries {
			t.Errorf("got %d entries, want %d", n, maxListEntries)
		}
		if !strings.Contains(got, "[stopped at 1000 entries") {
			t.Errorf("got no stop note in ...%q", got[len(got)-100:])
		}
	})
}

func TestSearchFiles(t *testing.T) {
	env := testEnv(t)
	writeTestFile(t, filepath.Join(env.FilesDir, "notes", "todo.md"), "buy milk\nCall Bob\nfix bug 42\n")
	writeTestFile(t, filepath.Join(env.FilesDir, "notes", "done.txt"), "called bob\n")
	writeTestFile(t, filepath.Join(env.FilesDir, "img.bin"), "bob\x00bob")
	writeTestFile(t, filepath.Join(env.FilesDir, "huge.log"), "bob\n"+strings.Repeat("y", maxSearchFileBytes))
	writeTestFile(t, filepath.Join(env.SharedDir, "team.md"), "Bob owns billing\n")
	tests := []struct {
		name  string
		input map[string]any
		want  string
		err   string
	}{
		{"by name", map[string]any{"name": "*.md"}, "notes/todo.md\n", ""},
		{"by name ignore case", map[string]any{"name": "TODO.MD", "ignore_case": true}, "notes/todo.md\n", ""},
		{"by content", map[string]any{"content": "bob"}, "notes/done.txt:1: called bob\n\n(1 files over 1 MiB were not searched by content)", ""},
		{"content ignore case", map[string]any{"content": "bob", "ignore_case": true, "name": "*.md"}, "notes/todo.md:2: Call Bob\n", ""},
		{"regexp", map[string]any{"content": `bug \d+`, "regexp": true, "path": "notes"}, "notes/todo.md:3: fix bug 42\n", ""},
		{"shared", map[string]any{"path": "shared", "content": "Bob"}, "shared/team.md:1: Bob owns billing\n", ""},
		{"no match", map[string]any{"name": "*.xls"}, "no matches", ""},
		{"max results", map[string]any{"content": "l", "name": "todo.md", "max_results": 1}, "notes/todo.md:1: buy milk\n\n[stopped after 1 results or 20000 files; narrow the search with path or name]", ""},
		{"nothing to find", map[string]any{}, "", "give name"},
		{"bad regexp", map[string]any{"content": "(", "regexp": true}, "", "not a valid regular expression"},
		{"bad glob", map[string]any{"name": "[a"}, "", "not a valid glob"},
		{"bad max", map[string]any{"name": "*", "max_results": 501}, "", "max_results 501 is out of range"},
		{"missing folder", map[string]any{"name": "*", "path": "nope"}, "", `folder "nope" does not exist`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := call(t, env, "search_files", tt.input)
			if tt.err != "" {
				wantErr(t, err, nil, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDeleteFile(t *testing.T) {
	env := testEnv(t)
	outside := t.TempDir()
	writeTestFile(t, filepath.Join(outside, "keep.txt"), "keep")
	writeTestFile(t, filepath.Join(env.FilesDir, "a.txt"), "a")
	writeTestFile(t, filepath.Join(env.FilesDir, "full", "x.txt"), "x")
	writeTestFile(t, filepath.Join(env.FilesDir, "full2", "y", "z.txt"), "z")
	writeTestFile(t, filepath.Join(env.SharedDir, "s.txt"), "s")
	os.MkdirAll(filepath.Join(env.FilesDir, "empty"), 0o755)
	symlinks := runtime.GOOS != "windows"
	if symlinks {
		os.Symlink(filepath.Join(outside, "keep.txt"), filepath.Join(env.FilesDir, "link-out"))
		os.Symlink(outside, filepath.Join(env.FilesDir, "dir-out"))
	}
	tests := []struct {
		name    string
		input   map[string]any
		want    string
		err     string
		gone    string // path under FilesDir that must no longer exist
		symlink bool
	}{
		{"file", map[string]any{"path": "a.txt"}, "deleted file a.txt", "", "a.txt", false},
		{"empty folder", map[string]any{"path": "empty"}, "deleted folder empty", "", "empty", false},
		{"full folder needs recursive", map[string]any{"path": "full"}, "", "is not empty; set recursive true", "", false},
		{"recursive", map[string]any{"path": "full2", "recursive": true}, "deleted folder full2 and everything in it", "", "full2", false},
		{"shared", map[string]any{"path": "shared/s.txt"}, "deleted file shared/s.txt", "", "", false},
		{"symlink removes the link only", map[string]any{"path": "link-out"}, "deleted symlink link-out", "", "link-out", true},
		{"missing", map[string]any{"path": "nope"}, "", `"nope" does not exist`, "", false},
		{"root", map[string]any{"path": "."}, "", "refusing to delete the whole folder", "", false},
		{"shared root", map[string]any{"path": "shared"}, "", "refusing to delete the whole folder", "", false},
		{"escape", map[string]any{"path": "../agent.db"}, "", "climbs out", "", false},
		{"through link out", map[string]any{"path": "dir-out/keep.txt"}, "", "points outside", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.symlink && !symlinks {
				t.Skip("needs symlinks")
			}
			got, err := call(t, env, "delete_file", tt.input)
			if tt.err != "" {
				wantErr(t, err, nil, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if tt.gone != "" {
				if _, err := os.Lstat(filepath.Join(env.FilesDir, tt.gone)); !os.IsNotExist(err) {
					t.Errorf("%s still exists (lstat: %v)", tt.gone, err)
				}
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(outside, "keep.txt")); err != nil || string(b) != "keep" {
		t.Errorf("the file outside was touched: %q, %v", b, err)
	}
}

func TestSpecialFiles(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs mkfifo")
	}
	env := testEnv(t)
	os.MkdirAll(env.FilesDir, 0o755)
	if err := mkfifo(filepath.Join(env.FilesDir, "pipe")); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	tests := []struct {
		tool  string
		input map[string]any
	}{
		{"read_file", map[string]any{"path": "pipe"}},
		{"append_file", map[string]any{"path": "pipe", "content": "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			_, err := call(t, env, tt.tool, tt.input)
			wantErr(t, err, invalid, `"pipe" is not a regular file`)
		})
	}
}
