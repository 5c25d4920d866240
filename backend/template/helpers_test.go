package template_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// openWorkspace opens a fresh data directory and returns its workspace.
// Nothing serves it: installs raise cards without any run executing.
func openWorkspace(t testing.TB) *workspace.Workspace {
	t.Helper()
	home, err := workspace.Open(context.Background(), workspace.Config{DataDir: t.TempDir(), Timezone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { home.Close() })
	ws, err := home.Workspace(home.Current())
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// agentView is what makes an agent the agent it is, without ids, times or
// anything of this computer's: the round trip compares these.
type agentView struct {
	Name         string                       `json:"name"`
	Handle       string                       `json:"handle"`
	Soul         string                       `json:"soul"`
	Provider     string                       `json:"provider"`
	Model        string                       `json:"model"`
	Capabilities []string                     `json:"capabilities"`
	AskFirst     map[string]bool              `json:"ask_first"`
	Skills       map[string]map[string]string `json:"skills"`
	Files        map[string]string            `json:"files"`
	Schedules    []scheduleView               `json:"schedules"`
	Triggers     []triggerView                `json:"triggers"`
	Apps         []string                     `json:"apps"`
}

type scheduleView struct {
	Name        string `json:"name"`
	Instruction string `json:"instruction"`
	Kind        string `json:"kind"`
	Cron        string `json:"cron"`
	Timezone    string `json:"timezone"`
	At          string `json:"at"`
	CatchUp     string `json:"catch_up"`
	Enabled     bool   `json:"enabled"`
}

type triggerView struct {
	Name        string   `json:"name"`
	Instruction string   `json:"instruction"`
	Methods     []string `json:"methods"`
	Enabled     bool     `json:"enabled"`
}

// content shows text as it is and binary data by its hash.
func content(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func viewAgent(t *testing.T, ws *workspace.Workspace, id string) agentView {
	t.Helper()
	ctx := context.Background()
	a, err := ws.Agents.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	v := agentView{Name: a.Name, Handle: a.Handle, Soul: a.Soul, Provider: a.Provider, Model: a.Model,
		Capabilities: a.Capabilities, AskFirst: a.AskFirst, Skills: map[string]map[string]string{}, Files: map[string]string{},
		Schedules: []scheduleView{}, Triggers: []triggerView{}, Apps: []string{}}
	skills, err := ws.Skills.List(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range skills {
		l, err := ws.Skills.Load(ctx, id, s.Name)
		if err != nil {
			t.Fatal(err)
		}
		v.Skills[s.Name] = map[string]string{}
		for _, f := range append([]string{"SKILL.md"}, l.Files...) {
			b, err := ws.Skills.ReadFile(ctx, id, s.Name, f)
			if err != nil {
				t.Fatal(err)
			}
			v.Skills[s.Name][f] = content(b)
		}
	}
	dir := filepath.Join(ws.Agents.Dir(id), "files")
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			v.Files[filepath.ToSlash(rel)] = content(b)
		}
		return nil
	})
	schedules, err := ws.Schedules.List(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range schedules {
		at := ""
		if s.At != nil {
			at = s.At.UTC().Format(time.RFC3339)
		}
		v.Schedules = append(v.Schedules, scheduleView{s.Name, s.Instruction, s.Kind, s.Cron, s.Timezone, at, s.CatchUp, s.Enabled})
	}
	sort.Slice(v.Schedules, func(i, j int) bool { return v.Schedules[i].Name < v.Schedules[j].Name })
	triggers, err := ws.Triggers.List(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range triggers {
		v.Triggers = append(v.Triggers, triggerView{tr.Name, tr.Instruction, tr.Methods, tr.Enabled})
	}
	apps, err := ws.Connectors.List(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range apps {
		if c.CatalogID == "" {
			v.Apps = append(v.Apps, "custom:"+c.Name)
		} else {
			v.Apps = append(v.Apps, c.CatalogID)
		}
	}
	sort.Strings(v.Apps)
	return v
}

// openCards lists an agent's open cards as "kind: what".
func openCards(t *testing.T, ws *workspace.Workspace, agentID string) []string {
	t.Helper()
	ps, err := ws.Runs.Pauses(context.Background(), run.PauseFilter{AgentID: agentID, Status: pause.Open})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range ps {
		var req struct {
			Connector string `json:"connector"`
			Variable  string `json:"variable"`
		}
		if err := json.Unmarshal(p.Request, &req); err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Kind+": "+req.Connector+req.Variable)
	}
	sort.Strings(out)
	return out
}

// entries returns each file a zip holds, decompressed.
func entries(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name] = b
	}
	return out
}

// mustNotHold fails when a canary is in the package's bytes or in any of
// its entries once decompressed.
func mustNotHold(t *testing.T, pkg []byte, canaries map[string]string) {
	t.Helper()
	for what, c := range canaries {
		if bytes.Contains(pkg, []byte(c)) {
			t.Errorf("the package's bytes hold the %s", what)
		}
		for name, b := range entries(t, pkg) {
			if bytes.Contains(b, []byte(c)) {
				t.Errorf("%s in the package holds the %s", name, what)
			}
			if strings.Contains(name, c) {
				t.Errorf("an entry's name holds the %s", what)
			}
		}
	}
}

// zipOf builds a zip from name → content, in the order given by names.
func zipOf(t testing.TB, files ...zipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate}
		if f.store {
			h.Method = zip.Store
		}
		if f.mode != 0 {
			h.SetMode(f.mode)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type zipEntry struct {
	name  string
	data  []byte
	mode  os.FileMode
	store bool
}

func file(name, data string) zipEntry { return zipEntry{name: name, data: []byte(data)} }

func ptr[T any](v T) *T { return &v }

func runFilter(agentID string) run.PauseFilter {
	return run.PauseFilter{AgentID: agentID, Status: pause.Open}
}
