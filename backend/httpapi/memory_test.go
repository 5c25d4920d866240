package httpapi_test

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/httpapi"
	"github.com/rerun-build/rerun-desktop/backend/memory"
	"github.com/rerun-build/rerun-desktop/backend/skill"
)

func (e *env) newAgent(t *testing.T, name string) string {
	t.Helper()
	var a agent.Agent
	if got := e.do(t, "POST", "/api/workspaces/"+e.ws+"/agents", `{"name":"`+name+`","box_id":"`+e.box+`"}`, &a); got != 201 {
		t.Fatalf("create agent: %d", got)
	}
	return a.ID
}

// send sends a raw body and returns the status, headers and answer.
func (e *env) send(t *testing.T, method, path, contentType string, body []byte) (int, http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, out
}

// changes collects the change events of a kind published from now on.
func (e *env) changes(t *testing.T, kind string) func() []event.Change {
	ch, stop := e.home.Events().Subscribe()
	t.Cleanup(stop)
	var got []event.Change
	return func() []event.Change {
		for {
			select {
			case c := <-ch:
				if c.Kind == kind {
					got = append(got, c)
				}
			case <-time.After(50 * time.Millisecond):
				return got
			}
		}
	}
}

func TestMemoryRoutes(t *testing.T) {
	e := newEnv(t)
	id := e.newAgent(t, "Scout")
	base := "/api/workspaces/" + e.ws
	events := e.changes(t, "memory.changed")

	// The answer always carries reason and existing.
	status, _, raw := e.send(t, "POST", base+"/agents/"+id+"/memories", "", []byte(`{"text":"The deploy day is Friday."}`))
	var first map[string]json.RawMessage
	json.Unmarshal(raw, &first)
	if status != 201 || string(first["reason"]) != `""` || string(first["existing"]) != "false" || first["superseded"] != nil {
		t.Fatalf("remember: %d %s, want 201 with reason \"\" and existing false", status, raw)
	}
	var old memory.Memory
	json.Unmarshal(first["memory"], &old)
	if old.Text != "The deploy day is Friday." || old.Source.RunID != "" || old.AgentID != id {
		t.Errorf("got memory %+v, want the text, written by a person, of the agent", old)
	}

	var again struct {
		Memory   memory.Memory `json:"memory"`
		Existing bool          `json:"existing"`
	}
	if got := e.do(t, "POST", base+"/agents/"+id+"/memories", `{"text":"the deploy day is friday"}`, &again); got != 201 || !again.Existing || again.Memory.ID != old.ID || again.Memory.Recalls != 1 {
		t.Errorf("same text again: %d %+v, want the existing memory reinforced", got, again)
	}

	var corrected struct {
		Memory     memory.Memory  `json:"memory"`
		Superseded *memory.Memory `json:"superseded"`
		Reason     string         `json:"reason"`
	}
	if got := e.do(t, "POST", base+"/agents/"+id+"/memories", `{"text":"Deploys happen on Thursday.","supersedes":"`+old.ID+`"}`, &corrected); got != 201 ||
		corrected.Superseded == nil || corrected.Superseded.ID != old.ID || corrected.Reason != "explicit" {
		t.Fatalf("supersede: %d %+v, want the old memory superseded explicitly", got, corrected)
	}

	var list []memory.Memory
	if got := e.do(t, "GET", base+"/agents/"+id+"/memories", "", &list); got != 200 || len(list) != 1 || list[0].ID != corrected.Memory.ID {
		t.Errorf("list: %d %+v, want only the active correction", got, list)
	}
	if e.do(t, "GET", base+"/agents/"+id+"/memories?retired=1", "", &list); len(list) != 2 || list[1].State != memory.Superseded {
		t.Errorf("list with retired: %+v, want the correction and the superseded one", list)
	}
	if e.do(t, "GET", base+"/agents/"+id+"/memories?q=thursday&limit=5", "", &list); len(list) != 1 || list[0].ID != corrected.Memory.ID {
		t.Errorf("search: %+v, want the Thursday memory", list)
	}
	if e.do(t, "GET", base+"/agents/"+id+"/memories?q=thursday", "", &list); list[0].Recalls != 0 {
		t.Errorf("listing reinforced a memory: %d recalls, want 0", list[0].Recalls)
	}

	// The person marks it useful: reinforced, as a run's use would.
	var useful memory.Memory
	if got := e.do(t, "POST", base+"/memories/"+corrected.Memory.ID+"/useful", "", &useful); got != 200 || useful.Recalls != 1 || useful.LastRecalledAt == nil {
		t.Errorf("useful: %d %+v, want one use recorded", got, useful)
	}
	var fail struct{ Error string }
	if got := e.do(t, "POST", base+"/memories/"+old.ID+"/useful", "", &fail); got != 409 || !strings.Contains(fail.Error, "superseded") {
		t.Errorf("useful on a superseded memory: %d %q, want 409", got, fail.Error)
	}

	var edited memory.Memory
	if got := e.do(t, "PATCH", base+"/memories/"+corrected.Memory.ID, `{"text":"Deploys happen on Wednesday."}`, &edited); got != 200 || edited.Text != "Deploys happen on Wednesday." {
		t.Errorf("edit: %d %+v", got, edited)
	}
	if got := e.do(t, "DELETE", base+"/memories/"+edited.ID, "", nil); got != 204 {
		t.Errorf("delete: %d, want 204", got)
	}
	if e.do(t, "GET", base+"/agents/"+id+"/memories", "", &list); len(list) != 0 {
		t.Errorf("after delete: %+v, want no active memory", list)
	}
	// remember ×3, useful, edit, delete
	if got := events(); len(got) != 6 || got[0].ID != id || got[0].Agent != id || got[0].Workspace != e.ws {
		t.Errorf("got %d memory.changed events (%+v), want 6 naming the agent", len(got), got)
	}

	failures := []struct {
		name, method, path, body string
		status                   int
		msg                      string
	}{
		{"empty text", "POST", "/agents/" + id + "/memories", `{"text":" "}`, 400, "needs some text"},
		{"unknown agent", "POST", "/agents/ag_nope/memories", `{"text":"x"}`, 404, "ag_nope"},
		{"list of unknown agent", "GET", "/agents/ag_nope/memories", "", 404, "ag_nope"},
		{"bad limit", "GET", "/agents/" + id + "/memories?limit=x", "", 400, "limit"},
		{"edit a superseded memory", "PATCH", "/memories/" + old.ID, `{"text":"x"}`, 409, "edit that one instead"},
		{"edit unknown", "PATCH", "/memories/mem_nope", `{"text":"x"}`, 404, "mem_nope"},
		{"delete unknown", "DELETE", "/memories/mem_nope", "", 404, "mem_nope"},
		{"supersede unknown", "POST", "/agents/" + id + "/memories", `{"text":"x y","supersedes":"mem_nope"}`, 404, "mem_nope"},
	}
	for _, tt := range failures {
		t.Run(tt.name, func(t *testing.T) {
			var out map[string]string
			if got := e.do(t, tt.method, base+tt.path, tt.body, &out); got != tt.status || !strings.Contains(out["error"], tt.msg) {
				t.Errorf("got %d %q, want %d mentioning %q", got, out["error"], tt.status, tt.msg)
			}
		})
	}
}

const skillMD = "---\nname: weekly-report\ndescription: Write the weekly report. Use on Fridays.\nlicense: MIT\n---\n# Steps\nRead reference/template.md.\n"

func TestSkillRoutes(t *testing.T) {
	e := newEnv(t)
	id := e.newAgent(t, "Scout")
	base := "/api/workspaces/" + e.ws + "/agents/" + id + "/skills"
	events := e.changes(t, "skill.changed")

	body, _ := json.Marshal(map[string]string{"skill_md": skillMD})
	var sk skill.Loaded
	if got := e.do(t, "PUT", base+"/weekly-report", string(body), &sk); got != 200 || sk.Name != "weekly-report" ||
		!strings.Contains(sk.FrontMatter, "license: MIT") || sk.Body != "# Steps\nRead reference/template.md.\n" || sk.Files == nil {
		t.Fatalf("put: %d %+v, want the parsed skill with an empty file list", got, sk)
	}
	body2, _ := json.Marshal(map[string]string{"skill_md": strings.Replace(skillMD, "Fridays", "Friday afternoons", 1)})
	e.do(t, "PUT", base+"/weekly-report", string(body2), nil)
	// The editor's "new skill" save refuses a taken name and keeps the old one.
	var refused map[string]string
	if got := e.do(t, "PUT", base+"/weekly-report?new=1", string(body), &refused); got != 409 || !strings.Contains(refused["error"], "already a skill named weekly-report") {
		t.Errorf("new skill over a taken name: got %d %q, want 409 saying it is taken", got, refused["error"])
	}

	var list []skill.Summary
	if got := e.do(t, "GET", base, "", &list); got != 200 || len(list) != 1 || list[0].Description != "Write the weekly report. Use on Friday afternoons." {
		t.Errorf("list: %d %+v", got, list)
	}
	if got := e.do(t, "GET", base+"/weekly-report", "", &sk); got != 200 || sk.Description != "Write the weekly report. Use on Friday afternoons." {
		t.Errorf("get: %d %+v", got, sk)
	}
	var versions []skill.Version
	if got := e.do(t, "GET", base+"/weekly-report/versions", "", &versions); got != 200 || len(versions) != 2 || versions[0].Version != 2 || versions[1].Body != skillMD {
		t.Errorf("versions: %d %+v, want 2 then 1", got, versions)
	}
	if got := e.do(t, "DELETE", base+"/weekly-report", "", nil); got != 204 {
		t.Errorf("delete: %d, want 204", got)
	}
	if e.do(t, "GET", base, "", &list); len(list) != 0 {
		t.Errorf("list after delete: %+v, want none", list)
	}
	if e.do(t, "GET", base+"/weekly-report/versions", "", &versions); len(versions) != 2 {
		t.Errorf("versions after delete: %d, want both kept", len(versions))
	}
	status, _, raw := e.send(t, "GET", base+"/never-made/versions", "", nil)
	if status != 200 || strings.TrimSpace(string(raw)) != "[]" {
		t.Errorf("versions of a skill never made: %d %s, want []", status, raw)
	}
	if got := events(); len(got) != 3 || got[0].ID != id || got[0].Agent != id {
		t.Errorf("got %d skill.changed events (%+v), want 3 naming the agent", len(got), got)
	}

	mismatch, _ := json.Marshal(map[string]string{"skill_md": skillMD})
	failures := []struct {
		name, method, path, body string
		status                   int
		msg                      string
	}{
		{"name mismatch", "PUT", base + "/other-name", string(mismatch), 400, `names the skill "weekly-report", not "other-name"`},
		{"no front matter", "PUT", base + "/x", `{"skill_md":"hello"}`, 400, "front matter"},
		{"bad name", "GET", base + "/Bad_Name", "", 400, "lowercase letters"},
		{"unknown skill", "GET", base + "/nope", "", 404, `no skill "nope"`},
		{"delete unknown", "DELETE", base + "/nope", "", 404, `no skill "nope"`},
		{"unknown agent", "GET", "/api/workspaces/" + e.ws + "/agents/ag_nope/skills", "", 404, "ag_nope"},
		{"put for unknown agent", "PUT", "/api/workspaces/" + e.ws + "/agents/ag_nope/skills/weekly-report", string(mismatch), 404, "ag_nope"},
		{"export unknown", "GET", base + "/nope/export", "", 404, `no skill "nope"`},
		{"name with spaces suggests its slug", "GET", base + "/Weekly%20Report", "", 400, `try "weekly-report"`},
	}
	for _, tt := range failures {
		t.Run(tt.name, func(t *testing.T) {
			var out map[string]string
			if got := e.do(t, tt.method, tt.path, tt.body, &out); got != tt.status || !strings.Contains(out["error"], tt.msg) {
				t.Errorf("got %d %q, want %d mentioning %q", got, out["error"], tt.status, tt.msg)
			}
		})
	}
}

// zipOf builds an archive of the given files (name → content), stored
// uncompressed so its size is predictable.
func zipOf(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, data := range files {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestSkillImportExport(t *testing.T) {
	e := newEnv(t)
	id := e.newAgent(t, "Scout")
	base := "/api/workspaces/" + e.ws + "/agents/" + id + "/skills"
	events := e.changes(t, "skill.changed")

	// As Claude exports a skill: one top folder, whatever its name.
	archive := zipOf(t, map[string][]byte{
		"Weekly Report/SKILL.md":              []byte(skillMD),
		"Weekly Report/reference/template.md": []byte("# Week {{n}}"),
		"__MACOSX/._SKILL.md":                 []byte("junk"),
	})
	status, _, raw := e.send(t, "POST", base+"/import", "application/zip", archive)
	var sk skill.Loaded
	json.Unmarshal(raw, &sk)
	if status != 201 || sk.Name != "weekly-report" || len(sk.Files) != 1 || sk.Files[0] != "reference/template.md" {
		t.Fatalf("import: %d %s, want 201 with the skill and its reference file", status, raw)
	}
	if got := events(); len(got) != 1 || got[0].ID != id {
		t.Errorf("got %+v, want one skill.changed for the agent", got)
	}

	status, header, raw := e.send(t, "GET", base+"/weekly-report/export", "", nil)
	if status != 200 || header.Get("Content-Type") != "application/zip" || !strings.Contains(header.Get("Content-Disposition"), `filename="weekly-report.zip"`) {
		t.Fatalf("export: %d %v", status, header)
	}
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatalf("export is not a zip: %v", err)
	}
	got := map[string]string{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		got[f.Name] = string(b)
	}
	if len(got) != 2 || got["weekly-report/SKILL.md"] != skillMD || got["weekly-report/reference/template.md"] != "# Week {{n}}" {
		t.Errorf("export holds %v, want SKILL.md and the reference file under weekly-report/", got)
	}

	refusals := []struct {
		name, contentType string
		body              []byte
		status            int
		msg               string
	}{
		{"zip slip", "application/zip", zipOf(t, map[string][]byte{"SKILL.md": []byte(skillMD), "../../evil.sh": []byte("x")}), 400, "points outside the skill folder"},
		{"no SKILL.md", "application/zip", zipOf(t, map[string][]byte{"README.md": []byte("x")}), 400, "no SKILL.md"},
		{"not a zip", "application/zip", []byte("hello"), 400, "not a readable .zip"},
		{"JSON instead of the zip", "application/json", []byte(`{}`), 400, "Content-Type: application/zip"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			status, _, raw := e.send(t, "POST", base+"/import", tt.contentType, tt.body)
			if status != tt.status || !strings.Contains(string(raw), tt.msg) {
				t.Errorf("got %d %s, want %d mentioning %q", status, raw, tt.status, tt.msg)
			}
		})
	}
	if status, _, _ := e.send(t, "POST", "/api/workspaces/"+e.ws+"/agents/ag_nope/skills/import", "application/zip", archive); status != 404 {
		t.Errorf("import for an unknown agent: %d, want 404", status)
	}
}

// The import route takes archives up to 12 MiB although every other body
// stops at 1 MiB.
func TestSkillImportBodyLimit(t *testing.T) {
	e := newEnv(t)
	id := e.newAgent(t, "Scout")
	path := "/api/workspaces/" + e.ws + "/agents/" + id + "/skills/import"

	big := make([]byte, 9<<20) // random: a real archive of this size does not shrink
	rand.Read(big)
	archive := zipOf(t, map[string][]byte{"SKILL.md": []byte(skillMD), "data.bin": big})
	if status, _, raw := e.send(t, "POST", path, "application/zip", archive); status != 201 {
		t.Errorf("import of a %d MiB archive: %d %.200s, want 201", len(archive)>>20, status, raw)
	}

	status, _, raw := e.send(t, "POST", path, "application/zip", make([]byte, httpapi.MaxImportBytes+1))
	if status != 413 || !strings.Contains(string(raw), "larger than 12 MiB") {
		t.Errorf("import over the limit: %d %s, want 413 naming 12 MiB", status, raw)
	}
	// Chunked, without a Content-Length: the limit holds while reading.
	req, _ := http.NewRequest("POST", e.srv.URL+path, io.MultiReader(bytes.NewReader(make([]byte, httpapi.MaxImportBytes+1))))
	req.ContentLength = -1
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 413 {
		t.Errorf("chunked import over the limit: %d, want 413", res.StatusCode)
	}
	// Other routes of the agent keep the 1 MiB limit.
	status, _, _ = e.send(t, "PUT", "/api/workspaces/"+e.ws+"/agents/"+id+"/skills/weekly-report", "application/json",
		[]byte(`{"skill_md":"`+strings.Repeat("x", httpapi.MaxBodyBytes)+`"}`))
	if status != 413 {
		t.Errorf("PUT skill over 1 MiB: %d, want 413", status)
	}
}
