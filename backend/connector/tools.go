package connector

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/skill"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

const (
	// maxDescription caps a tool description shown to the agent.
	maxDescription = 4 << 10
	// retryAfter is how long Tools leaves alone an app never connected
	// whose last attempt failed.
	retryAfter = time.Minute
)

// Tools returns the tools of every app installed on the agent, named
// <slug>__<tool>, in family "connectors". They are the pinned (approved)
// definitions, so nothing a server changes reaches the model unreviewed; a
// changed one stays listed but refuses to run. Apps with a missing variable
// are left out. An app never connected is connected now to pin its tools;
// one that cannot be reached is skipped (its status says why) rather than
// failing the caller.
func (s *Service) Tools(ctx context.Context, agentID string) ([]tool.Tool, error) {
	list, err := s.List(ctx, agentID)
	if err != nil {
		return nil, err
	}
	out := []tool.Tool{}
	for _, c := range list {
		if len(c.Missing) > 0 {
			continue
		}
		if c.PinnedAt == nil {
			// An app that just failed is not retried at every run start;
			// a call (or Test) retries it at once.
			if (c.Status == StatusError || c.Status == StatusNeedsSignIn) && c.CheckedAt != nil && s.now().Sub(*c.CheckedAt) < retryAfter {
				continue
			}
			if _, err := s.connection(ctx, c.ID); err != nil {
				s.log.Info("app skipped from the tool list", "connector", c.ID, "app", c.Name, "err", err)
				continue
			}
			if c, err = s.Get(ctx, c.ID); err != nil {
				return nil, err
			}
		}
		for _, ti := range c.Tools {
			if ti.State != ToolApproved && ti.State != ToolChanged {
				continue
			}
			out = append(out, s.agentTool(c, ti))
		}
	}
	return out, nil
}

func (s *Service) agentTool(c Connector, ti ToolInfo) tool.Tool {
	desc := strings.TrimSpace(ti.Definition.Description)
	if len(desc) > maxDescription {
		desc = desc[:maxDescription] + "…"
	}
	if desc == "" {
		desc = ti.Name
	}
	desc = fmt.Sprintf("[%s] %s", c.Name, desc)
	if ti.State == ToolChanged {
		desc += fmt.Sprintf(" (BLOCKED: %s changed this tool since the person approved it; it will not run until they approve it again in the app.)", c.Name)
	}
	id, name, hash := c.ID, ti.Name, ti.pinnedHash
	return tool.Tool{
		Name:        ti.AgentName,
		Family:      Family,
		Description: desc,
		Schema:      objectSchema(ti.Definition.InputSchema),
		Run: func(ctx context.Context, _ *tool.Env, input json.RawMessage) (string, error) {
			return s.Call(ctx, id, name, hash, input)
		},
	}
}

// objectSchema makes sure a tool's input schema is an object schema, as
// model providers require.
func objectSchema(raw json.RawMessage) json.RawMessage {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
		return mustJSON(m)
	}
	return raw
}

// Call runs a server's tool with input (a JSON object), provided its live
// definition still hashes to pinnedHash, and returns its result as text.
// A request that never reached the server (its session or stdio process
// had died) is sent once more on a new session; one the server read and
// then died on comes back as an interrupted call, never sent again. An
// error result of the tool comes back as an error with its text.
func (s *Service) Call(ctx context.Context, id, name, pinnedHash string, input json.RawMessage) (string, error) {
	var args json.RawMessage
	if t := strings.TrimSpace(string(input)); t == "" || t == "null" {
		args = json.RawMessage(`{}`)
	} else {
		args = input
	}
	for attempt := 0; ; attempt++ {
		c, err := s.connection(ctx, id)
		if err != nil {
			return "", err
		}
		c.mu.Lock()
		lt, ok := c.tools[name]
		c.active++
		c.lastUse = s.now()
		c.mu.Unlock()
		done := func() {
			c.mu.Lock()
			c.active--
			c.lastUse = s.now()
			c.mu.Unlock()
		}
		if !ok {
			done()
			return "", fault.NotFound("the app no longer offers the tool %s; the person can review the app's tools in the Apps tab", name)
		}
		if lt.hash != pinnedHash {
			done()
			cn, _ := s.Get(ctx, id)
			return "", fault.Conflict("blocked: %s changed the definition of its tool %s since the person approved it. It will not run until the person reviews the change and approves it again in the agent's Apps tab; tell them, and do not try to do the same thing another way", cn.Name, name)
		}
		cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
		res, err := c.client.CallTool(cctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}})
		cancel()
		done()
		switch {
		case err == nil:
			text := resultText(res)
			if res.IsError {
				if text == "" {
					text = "the tool reported an error without a message"
				}
				return "", errors.New(text)
			}
			return text, nil
		case ctx.Err() != nil:
			return "", ctx.Err()
		case errors.Is(cctx.Err(), context.DeadlineExceeded):
			return "", fmt.Errorf("%s did not answer within %s", name, s.cfg.CallTimeout)
		case attempt == 0 && reopenable(err):
			// The session is gone before the request reached the server:
			// safe to send it again on a new one.
			s.dropConn(id, c)
			continue
		case errors.Is(err, errInterrupted):
			// The server read the request and died: it may have done part
			// of it, so sending it again is for the agent to decide.
			s.dropConn(id, c)
			cn, _ := s.Get(ctx, id)
			return "", fmt.Errorf("call %s: interrupted: %s stopped before it answered, so the tool may or may not have done it; check before calling it again", name, cn.Name)
		default:
			if !isToolError(err) {
				s.dropConn(id, c)
			}
			if isAuthError(err) {
				cn, _ := s.Get(ctx, id)
				s.failed(ctx, cn, err)
				return "", s.connectError(cn, err)
			}
			return "", fmt.Errorf("call %s: %s", name, s.redact(err.Error()))
		}
	}
}

// reopenable reports a failure where the request never reached a live
// session (the stdio process had exited, the HTTP session expired).
func reopenable(err error) bool {
	var notSent *notSentError
	return errors.As(err, &notSent) || errors.Is(err, transport.ErrTransportClosed) || errors.Is(err, transport.ErrSessionTerminated)
}

// isToolError reports a JSON-RPC error answer (anything but a transport
// failure): the session itself is fine.
func isToolError(err error) bool {
	var te *transport.Error
	return !errors.As(err, &te)
}

// resultText joins a tool result's text contents; other contents are
// described in a line, structured content is given as JSON when there is
// no text.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch v := c.(type) {
		case mcp.TextContent:
			parts = append(parts, v.Text)
		case *mcp.TextContent:
			parts = append(parts, v.Text)
		case mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %s]", v.MIMEType, size(v.Data)))
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %s]", v.MIMEType, size(v.Data)))
		case mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %s]", v.MIMEType, size(v.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %s]", v.MIMEType, size(v.Data)))
		case mcp.ResourceLink:
			parts = append(parts, linkText(v))
		case *mcp.ResourceLink:
			parts = append(parts, linkText(*v))
		case mcp.EmbeddedResource:
			parts = append(parts, resourceText(v.Resource))
		case *mcp.EmbeddedResource:
			parts = append(parts, resourceText(v.Resource))
		default:
			parts = append(parts, fmt.Sprintf("[%T content]", c))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return string(b)
		}
	}
	return strings.Join(parts, "\n")
}

func linkText(l mcp.ResourceLink) string {
	s := fmt.Sprintf("[resource link: %s <%s>", l.Name, l.URI)
	if l.MIMEType != "" {
		s += " " + l.MIMEType
	}
	if l.Description != "" {
		s += " — " + l.Description
	}
	return s + "]"
}

func resourceText(r mcp.ResourceContents) string {
	switch v := r.(type) {
	case mcp.TextResourceContents:
		return fmt.Sprintf("[resource %s]\n%s", v.URI, v.Text)
	case *mcp.TextResourceContents:
		return fmt.Sprintf("[resource %s]\n%s", v.URI, v.Text)
	case mcp.BlobResourceContents:
		return fmt.Sprintf("[resource %s: %s, %s]", v.URI, v.MIMEType, size(v.Blob))
	case *mcp.BlobResourceContents:
		return fmt.Sprintf("[resource %s: %s, %s]", v.URI, v.MIMEType, size(v.Blob))
	}
	return "[resource]"
}

// size describes the decoded size of base64 data.
func size(b64 string) string {
	n := base64.StdEncoding.DecodedLen(len(b64))
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/1024)
}

// Test reconnects an app from scratch and lists its tools (pinning them
// when it was never approved). A failure is recorded in its status and
// returned.
func (s *Service) Test(ctx context.Context, id string) (Connector, error) {
	s.drop(id)
	if _, err := s.connection(ctx, id); err != nil {
		return Connector{}, err
	}
	return s.Get(ctx, id)
}

// Status checks an app against its server now — connecting if needed,
// relisting its tools otherwise — and returns it with its status.
func (s *Service) Status(ctx context.Context, id string) (Connector, error) {
	c, err := s.connection(ctx, id)
	if err == nil {
		if err = s.relist(ctx, id, c); err != nil {
			s.dropConn(id, c)
			cn, gerr := s.Get(ctx, id)
			if gerr != nil {
				return Connector{}, gerr
			}
			s.failed(ctx, cn, err)
		}
	}
	cn, gerr := s.Get(ctx, id)
	if gerr != nil {
		return Connector{}, gerr
	}
	if err != nil && errors.Is(err, fault.ErrNotFound) {
		return Connector{}, err
	}
	return cn, nil
}

// Approve pins the server's current definition of every tool — the person
// reviewed them — which unblocks changed tools and offers new ones.
func (s *Service) Approve(ctx context.Context, id string) (Connector, error) {
	c, err := s.connection(ctx, id)
	if err != nil {
		return Connector{}, err
	}
	if err := s.relist(ctx, id, c); err != nil {
		s.dropConn(id, c)
		return Connector{}, err
	}
	now := store.FormatTime(s.now())
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := pinAll(ctx, tx, id, now); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE connectors SET status = ?, error = '', updated_at = ? WHERE id = ?`, StatusConnected, now, id)
		return err
	})
	if err != nil {
		return Connector{}, fmt.Errorf("approve tools of %s: %w", id, err)
	}
	cn, err := s.Get(ctx, id)
	if err != nil {
		return Connector{}, err
	}
	s.log.Info("app tools approved", "connector", id, "app", cn.Name, "tools", len(cn.Tools))
	s.publish(KindUpdated, cn)
	return cn, nil
}

// TryCustom connects to a custom server without saving it and lists its
// tools, for the form's Test button. Its variables must be set already.
func (s *Service) TryCustom(ctx context.Context, c Custom) ([]ToolInfo, error) {
	t, auth, oauth, err := c.transport()
	if err != nil {
		return nil, err
	}
	slug := customSlug(c.Name)
	cn := Connector{ID: store.NewID("cn"), Name: strings.TrimSpace(c.Name), Slug: slug, Auth: auth, OAuth: oauth, Transport: t}
	s.settle(&cn)
	if len(cn.Missing) > 0 {
		return nil, fault.Invalid("set these workspace variables first (Settings → Variables): %s", strings.Join(cn.Missing, ", "))
	}
	conn, err := s.open(ctx, cn)
	if err != nil {
		return nil, s.connectError(cn, err)
	}
	defer conn.close()
	out := []ToolInfo{}
	taken := map[string]bool{}
	for _, name := range sortedKeys(conn.tools) {
		ti := ToolInfo{Name: name, State: ToolNew, Definition: conn.tools[name].def, AgentName: toolName(slug, name, taken)}
		taken[ti.AgentName] = true
		out = append(out, ti)
	}
	return out, nil
}

// SkillSummary is an installed app's entry in the agent's skill index.
type SkillSummary struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Skills returns the skills of the apps installed and signed in on an agent
// (those of catalog apps, and one generated per custom server listing its
// tools), for the prompt's skill index. Errors are logged and leave the list short:
// a skill index never fails a run.
func (s *Service) Skills(agentID string) []SkillSummary {
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	list, err := s.List(ctx, agentID)
	if err != nil {
		s.log.Error("list app skills", "agent", agentID, "err", err)
		return []SkillSummary{}
	}
	out := []SkillSummary{}
	for _, c := range list {
		if len(c.Missing) > 0 {
			continue // its tools are not offered either
		}
		if sk, err := s.skillOf(c); err == nil {
			out = append(out, SkillSummary{Name: sk.Name, Description: sk.Description})
		}
	}
	return out
}

// LoadSkill returns the skill of an installed app by skill name, for
// load_skill.
func (s *Service) LoadSkill(ctx context.Context, agentID, name string) (skill.Skill, error) {
	list, err := s.List(ctx, agentID)
	if err != nil {
		return skill.Skill{}, err
	}
	for _, c := range list {
		if sk, err := s.skillOf(c); err == nil && sk.Name == name {
			return sk, nil
		}
	}
	return skill.Skill{}, fault.NotFound("no app skill %q on this agent", name)
}

func (s *Service) skillOf(c Connector) (skill.Skill, error) {
	if c.app != nil {
		return skill.Parse([]byte(draftSkill(c.Slug, *c.app, c.Tools)))
	}
	if c.CatalogID != "" {
		app, ok := s.catalog.Get(c.CatalogID)
		if !ok {
			return skill.Skill{}, fault.NotFound("app %q left the catalog", c.CatalogID)
		}
		return skill.Parse([]byte(app.Skill))
	}
	name := strings.ReplaceAll(c.Slug, "_", "-")
	var b strings.Builder
	fmt.Fprintf(&b, "# %s (custom MCP server)\n\nIts tools are named %s__<tool>:\n\n", c.Name, c.Slug)
	n := 0
	for _, t := range c.Tools {
		if t.State == ToolApproved || t.State == ToolChanged {
			desc := strings.Join(strings.Fields(t.Definition.Description), " ")
			if len(desc) > 300 {
				desc = desc[:300] + "…"
			}
			fmt.Fprintf(&b, "- `%s`: %s\n", t.AgentName, desc)
			n++
		}
	}
	if n == 0 {
		b.WriteString("(none approved yet)\n")
	}
	return skill.Skill{Name: name, Description: fmt.Sprintf("Tools of %s, a custom MCP server the person added (%s__*).", c.Name, c.Slug),
		FrontMatter: "", Body: b.String()}, skill.CheckName(name)
}
