package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/brain"
)

// The Brain view's whole life over real HTTP: create, list, get by slug,
// edit with the version it started from, a concurrent edit refused with
// what to do, history and one version, delete, and the events.
func TestBrainPages(t *testing.T) {
	e := newEnv(t)
	base := "/api/workspaces/" + e.ws + "/brain"
	created := e.changes(t, brain.EventCreated)
	updated := e.changes(t, brain.EventUpdated)
	deleted := e.changes(t, brain.EventDeleted)

	var p brain.Page
	if got := e.do(t, "POST", base, `{"title":"What we sell","body":"# Offer\n\nCity bikes."}`, &p); got != 201 {
		t.Fatalf("create: %d", got)
	}
	if p.Version != 1 || p.UpdatedBy != brain.Person || p.Slug != "what-we-sell" || p.Summary.Summary != "City bikes." || !p.EditedByPerson {
		t.Errorf("created %+v", p.Summary)
	}
	var fail struct{ Error string }
	if got := e.do(t, "POST", base, `{"title":"WHAT WE SELL","body":"x"}`, &fail); got != 409 || !strings.Contains(fail.Error, "already has a page") {
		t.Errorf("duplicate title: %d %q, want 409 saying so", got, fail.Error)
	}
	if got := e.do(t, "POST", base, `{"title":"X","body":"x","by":"foreman"}`, &fail); got != 400 {
		t.Errorf("a body naming its author: %d, want 400 (the HTTP API writes as the person)", got)
	}

	var list []brain.Summary
	if got := e.do(t, "GET", base, "", &list); got != 200 || len(list) != 1 || list[0].Title != "What we sell" || list[0].UpdatedBy != "person" {
		t.Fatalf("list: %d %+v", got, list)
	}
	if strings.Contains(mustJSON(t, list), `"body"`) {
		t.Errorf("the list carries bodies")
	}
	var got brain.Page
	if code := e.do(t, "GET", base+"/what-we-sell", "", &got); code != 200 || got.ID != p.ID || got.Body != "# Offer\n\nCity bikes." {
		t.Errorf("get by slug: %d %+v", code, got)
	}

	if code := e.do(t, "PATCH", base+"/"+p.ID, `{"body":"City and cargo bikes."}`, &fail); code != 400 || !strings.Contains(fail.Error, "base_version") {
		t.Errorf("edit without base_version: %d %q", code, fail.Error)
	}
	if code := e.do(t, "PATCH", base+"/"+p.ID, `{"body":"City and cargo bikes.","base_version":1}`, &got); code != 200 || got.Version != 2 {
		t.Fatalf("edit: %d version %d", code, got.Version)
	}
	// A second editor who also loaded version 1.
	if code := e.do(t, "PATCH", base+"/"+p.ID, `{"body":"Only city bikes.","base_version":1}`, &fail); code != 409 ||
		!strings.Contains(fail.Error, "at version 2") || !strings.Contains(fail.Error, "reload the page") {
		t.Errorf("concurrent edit: %d %q, want 409 saying what to do", code, fail.Error)
	}
	e.do(t, "GET", base+"/"+p.ID, "", &got)
	if got.Body != "City and cargo bikes." {
		t.Errorf("the refused edit changed the page: %q", got.Body)
	}

	var vs []brain.Version
	if code := e.do(t, "GET", base+"/"+p.ID+"/versions", "", &vs); code != 200 || len(vs) != 2 || vs[0].Version != 2 || vs[1].Body != "# Offer\n\nCity bikes." {
		t.Errorf("versions: %d %+v", code, vs)
	}
	var v brain.Version
	if code := e.do(t, "GET", base+"/"+p.ID+"/versions/1", "", &v); code != 200 || v.Author != brain.Person || v.Body != "# Offer\n\nCity bikes." {
		t.Errorf("version 1: %d %+v", code, v)
	}
	if code := e.do(t, "GET", base+"/"+p.ID+"/versions/zero", "", &fail); code != 400 {
		t.Errorf("version zero: %d, want 400", code)
	}

	if code := e.do(t, "DELETE", base+"/"+p.ID, "", nil); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	if code := e.do(t, "GET", base+"/"+p.ID, "", &fail); code != 404 {
		t.Errorf("get after delete: %d, want 404", code)
	}
	if code := e.do(t, "GET", base+"/"+p.ID+"/versions", "", &vs); code != 200 || len(vs) != 2 {
		t.Errorf("history after delete: %d, %d versions; want both kept", code, len(vs))
	}
	if n := len(created()); n != 1 {
		t.Errorf("got %d %s events, want 1", n, brain.EventCreated)
	}
	if n := len(updated()); n != 1 {
		t.Errorf("got %d %s events, want 1", n, brain.EventUpdated)
	}
	if c := deleted(); len(c) != 1 || c[0].ID != p.ID || c[0].Workspace != e.ws {
		t.Errorf("delete events: %+v", c)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
