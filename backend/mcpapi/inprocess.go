package mcpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/tool"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// Family is the capability family the API's tools carry when a built-in
// agent uses them in process. No agent switches it on: only built-in agents
// get these tools.
const Family = "rerun"

// InProcess returns, for workspace.Config.APITools, the API's tool set as
// the built-in agents' tool source: the same handlers the MCP endpoint
// calls, in process, with no HTTP and no API key. Webhook URLs in results
// are shown on the server at localURL (http://127.0.0.1:7777; "" shows
// paths). A destructive tool (delete_*, detach_connector, db_execute…)
// waits for the person's approval on a card before it runs.
func InProcess(localURL string) func(*workspace.Workspace) run.ToolSource {
	return func(w *workspace.Workspace) run.ToolSource { return inProcess{w: w, url: localURL} }
}

type inProcess struct {
	w   *workspace.Workspace
	url string
}

// Tools gives a built-in agent the whole API tool set; other agents get none.
func (s inProcess) Tools(_ context.Context, a agent.Agent) ([]tool.Tool, error) {
	if a.Builtin == "" {
		return nil, nil
	}
	defs := tools()
	out := make([]tool.Tool, 0, len(defs))
	for _, d := range defs {
		out = append(out, s.tool(d))
	}
	return out, nil
}

func (s inProcess) tool(d toolDef) tool.Tool {
	t := tool.Tool{
		Name: d.name, Family: Family, Description: d.description, Schema: json.RawMessage(d.schema),
		Run: func(ctx context.Context, _ *tool.Env, input json.RawMessage) (string, error) {
			ctx = WithLocalURL(WithWorkspace(ctx, s.w), s.url)
			if len(bytes.TrimSpace(input)) == 0 || string(bytes.TrimSpace(input)) == "null" {
				input = json.RawMessage(`{}`)
			}
			out, err := d.run(ctx, s.w, input)
			if err != nil {
				return "", errors.New(d.errorText(err))
			}
			b, err := json.Marshal(out)
			if err != nil {
				return "", errors.New(d.name + " failed: its result could not be encoded")
			}
			return string(b), nil
		},
	}
	if d.destructive {
		t.Approve = func(_ context.Context, input json.RawMessage) (string, string, error) {
			var b bytes.Buffer
			if json.Indent(&b, input, "", "  ") != nil {
				b.Reset()
				b.Write(input)
			}
			return d.title, b.String(), nil
		}
	}
	return t
}
