// The house rules of sync/, checked on every test run: the relay is a
// standalone program that imports nothing from backend/ (nor the desktop
// shell), the protocol imports only the standard library, the server and
// the client do not import each other, and every package says in a doc
// comment what it owns.
package sync_test

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/rerun-build/rerun-desktop"

type listed struct {
	ImportPath string
	Standard   bool
}

// deps lists the packages pkg is built from (go list -deps), itself
// included.
func deps(t *testing.T, pkg string) []listed {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-json=ImportPath,Standard", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	var list []listed
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		list = append(list, p)
	}
	if len(list) < 2 {
		t.Fatalf("go list -deps %s listed %d packages", pkg, len(list))
	}
	return list
}

func TestImports(t *testing.T) {
	for _, tc := range []struct {
		pkg       string
		forbidden []string // module-relative prefixes
		stdOnly   bool
	}{
		{"./cmd/rerun-relay", []string{"/backend", "/app", "/frontend", "/sync/client"}, false},
		{"./relay", []string{"/backend", "/app", "/frontend", "/sync/client"}, false},
		{"./client", []string{"/backend", "/app", "/frontend", "/sync/relay"}, false},
		{"./protocol", nil, true},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			for _, p := range deps(t, tc.pkg) {
				if tc.stdOnly && !p.Standard && !strings.HasPrefix(p.ImportPath, module+"/sync/protocol") {
					t.Errorf("%s depends on %s: the protocol imports only the standard library", tc.pkg, p.ImportPath)
				}
				for _, f := range tc.forbidden {
					if p.ImportPath == module+f || strings.HasPrefix(p.ImportPath, module+f+"/") {
						t.Errorf("%s depends on %s", tc.pkg, p.ImportPath)
					}
				}
				if strings.HasPrefix(p.ImportPath, "github.com/wailsapp/") {
					t.Errorf("%s depends on %s: the relay and its client run without the desktop shell", tc.pkg, p.ImportPath)
				}
			}
		})
	}
}

func TestPackageDocs(t *testing.T) {
	// Packages with code (this folder holds only this test).
	out, err := exec.Command("go", "list", "-f", "{{if .GoFiles}}{{.Dir}} {{.Name}}{{end}}", "./...").Output()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		dir, name, _ := strings.Cut(strings.TrimSpace(line), " ")
		if dir == "" {
			continue
		}
		pkgs, err := parser.ParseDir(token.NewFileSet(), dir, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		doc := false
		for _, p := range pkgs {
			for path, f := range p.Files {
				if strings.HasSuffix(path, "_test.go") || f.Doc == nil {
					continue
				}
				text := f.Doc.Text()
				if strings.HasPrefix(text, "Package "+name+" ") || name == "main" && strings.HasPrefix(text, "Command ") {
					doc = true
				}
			}
		}
		if !doc {
			t.Errorf("%s: no doc comment saying what package %s owns", dir, name)
		}
		n++
	}
	if n < 5 {
		t.Fatalf("found %d packages under sync/; is the test running in the right folder?", n)
	}
}
