package mcpapi_test

import (
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/mcpapi"
)

func TestConnectorTools(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.key)
	mustCall(t, c, "create_agent", map[string]any{"name": "Writer"}, nil)

	var found struct {
		Connectors []mcpapi.CatalogApp `json:"connectors"`
	}
	mustCall(t, c, "search_connectors", map[string]any{"query": "github"}, &found)
	if len(found.Connectors) == 0 || found.Connectors[0].ID != "github" || found.Connectors[0].Auth != "api_key" || len(found.Connectors[0].Variables) == 0 {
		t.Fatalf("search_connectors github = %+v", found)
	}

	// No credential can be passed: the tool has no argument for one.
	for _, arg := range []string{"api_key", "token", "GITHUB_TOKEN", "password"} {
		text, isErr := call(t, c, "attach_connector", map[string]any{"agent": "@writer", "connector": "github", arg: "ghp_nope"})
		if !isErr || !strings.Contains(text, "looks like a credential") {
			t.Errorf("attach_connector with %s: %v %s, want refused as a credential", arg, isErr, text)
		}
	}
	var attached struct {
		Connector mcpapi.ConnectorView `json:"connector"`
		Message   string               `json:"message"`
	}
	mustCall(t, c, "attach_connector", map[string]any{"agent": "@writer", "connector": "GitHub"}, &attached)
	if attached.Connector.CatalogID != "github" || attached.Connector.Status != "needs_sign_in" || attached.Connector.Next == "" ||
		!strings.Contains(attached.Message, "must finish the sign-in in the Rerun app") || !strings.Contains(attached.Message, attached.Connector.Next) {
		t.Fatalf("attach_connector = %+v", attached)
	}
	if text, isErr := call(t, c, "attach_connector", map[string]any{"agent": "@writer", "connector": "no-such-app"}); !isErr || !strings.Contains(text, "search_connectors") {
		t.Errorf("attach an unknown app: %v %s", isErr, text)
	}

	var list struct {
		Connectors []mcpapi.ConnectorView `json:"connectors"`
	}
	mustCall(t, c, "list_agent_connectors", map[string]any{"agent": "@writer"}, &list)
	if len(list.Connectors) != 1 || list.Connectors[0].ID != attached.Connector.ID || list.Connectors[0].Missing[0] != "GITHUB_TOKEN" {
		t.Fatalf("list_agent_connectors = %+v", list)
	}
	mustCall(t, c, "list_connectors", nil, &list)
	if len(list.Connectors) != 1 || list.Connectors[0].Agent != "@writer" {
		t.Fatalf("list_connectors = %+v", list)
	}

	mustCall(t, c, "detach_connector", map[string]any{"agent": "@writer", "connector": "github"}, nil)
	mustCall(t, c, "list_connectors", nil, &list)
	if len(list.Connectors) != 0 {
		t.Fatalf("after detach_connector: %+v", list)
	}
	if text, isErr := call(t, c, "detach_connector", map[string]any{"agent": "@writer", "connector": "github"}); !isErr || !strings.Contains(text, "no connector") {
		t.Errorf("detach a missing connector: %v %s", isErr, text)
	}
}
