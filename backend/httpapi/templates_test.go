package httpapi_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/template"
)

// The template library through the UI's routes: save an agent as a
// template (preview first), export it, import the file, install it.
func TestTemplateRoutes(t *testing.T) {
	e := newEnv(t)
	id := e.newAgent(t, "Clerk")
	base := "/api/workspaces/" + e.ws
	if code := e.do(t, "POST", base+"/agents/"+id+"/apps", `{"catalog_id":"github"}`, nil); code != 201 {
		t.Fatalf("install github = %d", code)
	}

	var preview template.Preview
	if code := e.do(t, "GET", base+"/agents/"+id+"/template-preview", "", &preview); code != 200 ||
		!strings.Contains(strings.Join(preview.Included, "\n"), "App GitHub") || !strings.Contains(strings.Join(preview.LeftOut, "\n"), "Memories") {
		t.Fatalf("preview = %d %+v", code, preview)
	}
	if code := e.do(t, "GET", base+"/agents/ag_nope/template-preview", "", nil); code != 404 {
		t.Errorf("preview of an unknown agent = %d, want 404", code)
	}
	var tpl template.Template
	if code := e.do(t, "POST", base+"/templates", `{"from_agent":"`+id+`","name":"Clerk kit","description":"Files things."}`, &tpl); code != 201 ||
		tpl.Name != "Clerk kit" || tpl.Connectors[0].CatalogID != "github" || tpl.Variables[0].Name != "GITHUB_TOKEN" {
		t.Fatalf("save as template = %d %+v", code, tpl)
	}
	if code := e.do(t, "POST", base+"/templates", `{"description":"no name"}`, nil); code != 400 {
		t.Errorf("blank template without a name = %d, want 400", code)
	}
	if code := e.do(t, "PATCH", base+"/templates/"+tpl.ID, `{"category":"Office","price":"paid"}`, &tpl); code != 200 || tpl.Price != "paid" {
		t.Fatalf("patch = %d %+v", code, tpl)
	}
	if code := e.do(t, "PATCH", base+"/templates/"+tpl.ID, `{"colour":"red"}`, nil); code != 400 {
		t.Errorf("patch with an unknown field = %d, want 400", code)
	}

	status, h, pkg := e.send(t, "GET", base+"/templates/"+tpl.ID+"/export", "", nil)
	if status != 200 || h.Get("Content-Type") != "application/zip" || !strings.Contains(h.Get("Content-Disposition"), `filename="Clerk-kit.rerun-template"`) {
		t.Fatalf("export = %d %v", status, h)
	}
	var imported template.Template
	status, _, body := e.send(t, "POST", base+"/templates/import", "application/zip", pkg)
	if json.Unmarshal(body, &imported); status != 201 || imported.ID == tpl.ID || imported.Category != "Office" {
		t.Fatalf("import = %d %s", status, body)
	}
	bad := bytes.Replace(pkg, []byte("template.json"), []byte("templatX.json"), -1)
	if status, _, body := e.send(t, "POST", base+"/templates/import", "application/zip", bad); status != 400 || !strings.Contains(string(body), "unexpected entry") {
		t.Errorf("import of a broken package = %d %s, want 400 saying what is wrong", status, body)
	}
	if status, _, _ := e.send(t, "POST", base+"/templates/import", "application/zip", make([]byte, template.MaxPackageBytes+1)); status != 413 {
		t.Errorf("import over 20 MiB = %d, want 413", status)
	}
	if status, _, _ := e.send(t, "POST", base+"/templates/import", "text/plain", pkg); status != 400 {
		t.Errorf("import as text = %d, want 400", status)
	}

	var inst template.Installed
	if code := e.do(t, "POST", base+"/templates/"+imported.ID+"/install", `{"name":"Second clerk"}`, &inst); code != 201 ||
		inst.Agent.Handle != "second-clerk" || len(inst.Cards) != 1 || !strings.Contains(inst.Cards[0], "Connect GitHub") {
		t.Fatalf("install = %d %+v", code, inst)
	}
	var list []template.Template
	if code := e.do(t, "GET", base+"/templates", "", &list); code != 200 || len(list) != 2 {
		t.Fatalf("list = %d, %d templates", code, len(list))
	}
	if code := e.do(t, "DELETE", base+"/templates/"+tpl.ID, "", nil); code != 204 {
		t.Errorf("delete = %d", code)
	}
	if code := e.do(t, "GET", base+"/templates/"+tpl.ID, "", nil); code != 404 {
		t.Errorf("get a deleted template = %d, want 404", code)
	}
}
