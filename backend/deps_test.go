// The house rules of backend/, checked on every test run: the workspace
// machine never imports the desktop shell or Wails, domain packages never
// import a transport, and every package says in a doc comment what it owns.
package backend_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/rerun-build/rerun-desktop"

// transports may import domain packages, never the reverse.
var transports = map[string]bool{"httpapi": true, "mcpapi": true}

// rootOnly may be imported only by transports (and main, outside backend/).
const root = module + "/backend/workspace"

type pkg struct {
	dir     string
	imports map[string]string // import path → file that imports it
	doc     bool
}

func loadPackages(t *testing.T) map[string]*pkg {
	t.Helper()
	pkgs := map[string]*pkg{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		p := pkgs[dir]
		if p == nil {
			p = &pkg{dir: dir, imports: map[string]string{}}
			pkgs[dir] = p
		}
		if f.Doc != nil && (strings.HasPrefix(f.Doc.Text(), "Package "+f.Name.Name+" ") ||
			f.Name.Name == "main" && strings.HasPrefix(f.Doc.Text(), "Command ")) {
			p.doc = true
		}
		for _, im := range f.Imports {
			p.imports[strings.Trim(im.Path.Value, `"`)] = path
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 5 {
		t.Fatalf("found only %d packages under backend/; is the test running in the right folder?", len(pkgs))
	}
	return pkgs
}

func TestImportDirection(t *testing.T) {
	for dir, p := range loadPackages(t) {
		name := filepath.ToSlash(dir)
		top := strings.Split(name, "/")[0]
		for im, file := range p.imports {
			switch {
			case strings.HasPrefix(im, "github.com/wailsapp/"):
				t.Errorf("%s imports %s: the workspace machine must run without the desktop shell", file, im)
			case im == module+"/app" || strings.HasPrefix(im, module+"/app/"):
				t.Errorf("%s imports %s: backend/ never imports the desktop shell", file, im)
			case im == module+"/frontend":
				t.Errorf("%s imports %s: the UI bundle is wired in by main, not the backend", file, im)
			case !transports[top] && strings.HasPrefix(im, module+"/backend/"):
				imTop := strings.Split(strings.TrimPrefix(im, module+"/backend/"), "/")[0]
				if transports[imTop] {
					t.Errorf("%s imports transport %s: domain packages never import a transport", file, im)
				}
				if im == root && top != "workspace" {
					t.Errorf("%s imports the composition root %s: only transports, tests and main may", file, im)
				}
			}
		}
	}
}

func TestEveryPackageHasADocComment(t *testing.T) {
	for dir, p := range loadPackages(t) {
		if !p.doc {
			t.Errorf("package in backend/%s has no doc comment (\"// Package x owns …\")", filepath.ToSlash(dir))
		}
	}
}

// The shell and the UI bundle follow the same rule as backend/.
func TestShellPackagesHaveDocs(t *testing.T) {
	for _, dir := range []string{"../app", "../frontend", "../sync"} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		found := false
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.PackageClauseOnly|parser.ParseComments)
			if err == nil && f.Doc != nil && strings.HasPrefix(f.Doc.Text(), "Package ") {
				found = true
			}
		}
		if !found && hasGo(entries) {
			t.Errorf("%s has no package doc comment", dir)
		}
	}
}

func hasGo(entries []os.DirEntry) bool {
	for _, e := range entries {
		// A folder of tests only (sync/ checks the layout below it) is no package to document.
		if strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
			return true
		}
	}
	return false
}
