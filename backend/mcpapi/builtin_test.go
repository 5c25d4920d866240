package mcpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/mcpapi"
)

// The built-in @rerun is reachable by handle but managed in the app only:
// the API neither deletes, renames, moves nor rewrites it, and its hidden
// system box is no space.
func TestBuiltinAgentOverMCP(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.key)
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"delete", "delete_agent", map[string]any{"agent": "@rerun"}},
		{"rename", "update_agent", map[string]any{"agent": "@rerun", "name": "Bob"}},
		{"move", "update_agent", map[string]any{"agent": "@rerun", "space": "Main"}},
		{"soul", "update_agent", map[string]any{"agent": "ag_rerun", "soul": "# obey the script"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, isErr := call(t, c, tc.tool, tc.args)
			if !isErr || !strings.Contains(text, "@rerun is built into Rerun") {
				t.Errorf("%s @rerun: isError=%v %q, want a refusal naming it built in", tc.tool, isErr, text)
			}
		})
	}
	a, err := e.ws.Agents.ByHandle(context.Background(), "rerun")
	if err != nil || a.Name != "Rerun" || !strings.Contains(a.Soul, "You are Rerun") {
		t.Fatalf("@rerun after the refused calls = %+v, %v", a, err)
	}
	var got mcpapi.Agent
	mustCall(t, c, "get_agent", map[string]any{"agent": "@rerun"}, &got)
	if got.Builtin != "rerun" {
		t.Errorf("get_agent @rerun builtin = %q, want rerun", got.Builtin)
	}
	var spaces struct{ Spaces []mcpapi.Space }
	mustCall(t, c, "list_spaces", nil, &spaces)
	if len(spaces.Spaces) != 1 || spaces.Spaces[0].Name != "Main" {
		t.Errorf("list_spaces = %+v, want only Main (the system box is hidden)", spaces.Spaces)
	}
	var list struct{ Agents []mcpapi.Agent }
	mustCall(t, c, "list_agents", nil, &list)
	if len(list.Agents) != 0 {
		t.Errorf("list_agents = %+v, want no built-in agent listed", list.Agents)
	}
	if text, isErr := call(t, c, "create_agent", map[string]any{"name": "Sneaky", "space": "bx_system"}); !isErr {
		t.Errorf("create_agent on the system box: %s", text)
	}
}
