// The house rules of backend/, checked on every test run: the workspace
// machine never imports the desktop shell or Wails, domain packages never
// import a transport, nothing executes a text/template or html/template (it
// keeps every method in the binary), and every package says in a doc
// comment what it owns.
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
			case im == "text/template" || im == "html/template":
				// Executing a template finds methods by name, so the linker
				// then keeps every exported method of every type: 17 MB of
				// the server binary (50.5 MB against 33.2 MB) and 6 MiB of
				// its idle memory.
				t.Errorf("%s imports %s: write the text with fmt and html.EscapeString instead (it costs 17 MB of binary)", file, im)
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

// layers is the house's floor plan: a package may import only packages on a
// lower floor, never one on its own floor or above. A new package gets a
// floor here before it builds: the test refuses a package it cannot place.
// The floors, bottom up:
//
//	0 kernel      failure kinds, change events, SQLite, model providers, the prompt,
//	              the sandbox of agents' processes
//	1 nouns       one domain noun each, over the kernel
//	2 views       packages that combine nouns (tools, notifications, sync records,
//	              backups)
//	3 reach       what agents act through: their browsers, their apps; and
//	              what reaches the person away from the window (the outbox)
//	4 engine      the run engine, and templates (which raise cards through an
//	              interface, so they sit beside the engine, not above it)
//	5 built-ins   the Foreman, the Rerun agent, the relay link: applications
//	              over the engine, each wired with a small Deps struct
//	6 root        the composition root
//	7, 8          the transports: MCP, then the UI's HTTP API (which mounts MCP)
var layers = map[string]int{
	"fault": 0, "event": 0, "store": 0, "llm": 0, "prompt": 0, "sandbox": 0,
	"jsonarg": 1, "agent": 1, "apikey": 1, "box": 1, "brain": 1, "memory": 1, "pause": 1,
	"schedule": 1, "secret": 1, "skill": 1, "trigger": 1, "envconfig": 1, "budget": 1, "autostart": 1, "prefs": 1, "update": 1,
	"search": 1, "retention": 1,
	"notify": 2, "replica": 2, "backup": 2, "models": 2, "tool": 2,
	"browser": 3, "connector": 3, "outbox": 3,
	"run": 4, "template": 4,
	"foreman": 5, "rerunagent": 5, "relaylink": 5, "agentfile": 5,
	"workspace": 6,
	"mcpapi":    7,
	"httpapi":   8,
}

func TestLayers(t *testing.T) {
	for dir, p := range loadPackages(t) {
		name := filepath.ToSlash(dir)
		if name == "." {
			continue
		}
		top := strings.Split(name, "/")[0]
		floor, ok := layers[top]
		if !ok {
			t.Errorf("backend/%s has no floor in the layer table (deps_test.go): give it one", top)
			continue
		}
		for im, file := range p.imports {
			rest, ok := strings.CutPrefix(im, module+"/backend/")
			if !ok {
				continue
			}
			imTop := strings.Split(rest, "/")[0]
			if imTop == top {
				continue // a package's own test helpers (storetest, llmtest, …)
			}
			if f, known := layers[imTop]; known && f >= floor {
				t.Errorf("%s (floor %d) imports backend/%s (floor %d): a package imports only lower floors", file, floor, imTop, f)
			}
		}
	}
}
