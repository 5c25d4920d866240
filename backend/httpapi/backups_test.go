package httpapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/backup"
)

func init() { backup.WorkFactor = 10 }

// Back up into a folder keeping the last 2, restore one, delete the
// restored workspace after its name is typed.
func TestBackupRestoreDeleteRoutes(t *testing.T) {
	e := newEnv(t)
	folder := t.TempDir()
	body := fmt.Sprintf(`{"folder":%q,"passphrase":"long enough pass","keep":2}`, folder)
	var made struct {
		Path    string   `json:"path"`
		Files   int      `json:"files"`
		Removed []string `json:"removed"`
	}
	for i := range 3 {
		if code := e.do(t, "POST", "/api/workspaces/"+e.ws+"/backups", body, &made); code != 201 {
			t.Fatalf("backup %d: status %d", i, code)
		}
		if i < 2 && made.Removed != nil {
			t.Fatalf("backup %d removed %v", i, made.Removed)
		}
	}
	if entries, _ := os.ReadDir(folder); len(entries) != 2 || len(made.Removed) != 1 {
		t.Fatalf("folder holds %d backups after 3 with keep 2 (removed %v), want 2", len(entries), made.Removed)
	}
	var last struct {
		Last *struct{ Path string } `json:"last"`
	}
	if e.do(t, "GET", "/api/workspaces/"+e.ws+"/backups/last", "", &last); last.Last == nil || last.Last.Path != made.Path {
		t.Fatalf("last backup = %+v, want %s", last.Last, made.Path)
	}
	var bad struct{ Error string }
	if code := e.do(t, "POST", "/api/workspaces/restore", fmt.Sprintf(`{"path":%q,"passphrase":"wrong passphrase"}`, made.Path), &bad); code != 400 || !strings.Contains(bad.Error, "passphrase") {
		t.Fatalf("wrong passphrase: %d %q, want 400 saying so", code, bad.Error)
	}
	var info struct{ ID, Name string }
	if code := e.do(t, "POST", "/api/workspaces/restore", fmt.Sprintf(`{"path":%q,"passphrase":"long enough pass","name":"Copy"}`, made.Path), &info); code != 201 || info.Name != "Copy" {
		t.Fatalf("restore: %d %+v", code, info)
	}
	if code := e.do(t, "POST", "/api/workspaces/"+info.ID+"/delete", `{"confirm":"Cop"}`, &bad); code != 400 {
		t.Fatalf("delete with a wrong name: %d, want 400", code)
	}
	if code := e.do(t, "POST", "/api/workspaces/"+info.ID+"/delete", `{"confirm":"Copy"}`, nil); code != 200 {
		t.Fatalf("delete: %d", code)
	}
	var list struct{ Workspaces []json.RawMessage }
	if e.do(t, "GET", "/api/workspaces", "", &list); len(list.Workspaces) != 1 {
		t.Fatalf("workspaces after delete = %d, want 1", len(list.Workspaces))
	}
	if code := e.do(t, "POST", "/api/workspaces/"+e.ws+"/delete", `{"confirm":"Personal"}`, &bad); code != 409 {
		t.Fatalf("deleting the last workspace: %d %q, want 409", code, bad.Error)
	}
}

// An agent's export downloads as a .rerun-agent file and imports back as a
// new agent with a new handle.
func TestAgentExportImportRoutes(t *testing.T) {
	e := newEnv(t)
	var a struct{ ID, Handle string }
	if code := e.do(t, "POST", "/api/workspaces/"+e.ws+"/agents", fmt.Sprintf(`{"name":"Ada","box_id":%q}`, e.box), &a); code != 201 {
		t.Fatalf("create agent: %d", code)
	}
	req, _ := http.NewRequest("GET", e.srv.URL+"/api/workspaces/"+e.ws+"/agents/"+a.ID+"/export", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Disposition"), "ada.rerun-agent") {
		t.Fatalf("export: %d %q", res.StatusCode, res.Header.Get("Content-Disposition"))
	}
	var got struct{ ID, Handle, Name string }
	if code := e.do(t, "POST", "/api/workspaces/"+e.ws+"/agents/import", string(data), &got); code != 201 || got.Handle == "ada" || got.Name != "Ada" {
		t.Fatalf("import: %d %+v, want 201 with a new handle", code, got)
	}
	var bad struct{ Error string }
	if code := e.do(t, "POST", "/api/workspaces/"+e.ws+"/agents/import", `{"schema_version":1}`, &bad); code != 400 || !strings.Contains(bad.Error, "not a Rerun agent file") {
		t.Fatalf("import of a non-agent file: %d %q", code, bad.Error)
	}
}
