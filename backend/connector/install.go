package connector

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Connector is an app or custom MCP server installed on an agent.
type Connector struct {
	ID        string `json:"id"`
	AgentID   string `json:"agent_id"`
	Slug      string `json:"slug"`       // its tools are <slug>__<tool>
	CatalogID string `json:"catalog_id"` // "" for a custom server; namespace/name for a registry app
	// Source is builtin (a catalog app Rerun reviewed), registry (an MCP
	// Registry server, not reviewed by Rerun) or custom.
	Source string `json:"source"`
	Icon   string `json:"icon,omitempty"`
	// Skill is the skill drafted for a registry app from its description
	// and tools, shown to the person; "" for the others.
	Skill string `json:"skill,omitempty"`
	Name  string `json:"name"`
	Auth  string `json:"auth"` // none | api_key | oauth
	// Transport is the configuration, with ${NAME} references, never values.
	Transport Transport `json:"transport"`
	OAuth     *OAuth    `json:"oauth,omitempty"`
	// Variables are the workspace variables it needs; Missing those not set
	// (an oauth app's token variable counts until it is signed in).
	Variables []string `json:"variables"`
	Missing   []string `json:"missing"`
	Status    string   `json:"status"`
	Error     string   `json:"error"`
	// Next says in one sentence what the person must do, "" when nothing.
	Next     string     `json:"next"`
	Tools    []ToolInfo `json:"tools"`
	PinnedAt *time.Time `json:"pinned_at"`
	// app is a registry app's entry as installed.
	app       *App
	CheckedAt *time.Time `json:"checked_at"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
}

// Tool states.
const (
	ToolApproved = "approved" // offered to the agent as pinned
	ToolChanged  = "changed"  // the server changed it: blocked until approved
	ToolNew      = "new"      // the server added it: not offered until approved
	ToolRemoved  = "removed"  // the server no longer lists it
)

// ToolInfo is one tool of an installed app, as the person reviews it.
type ToolInfo struct {
	Name      string `json:"name"`       // the server's name
	AgentName string `json:"agent_name"` // what the agent calls it
	State     string `json:"state"`
	// Definition is the approved one (the server's, for a new tool).
	Definition Definition `json:"definition"`
	// Live is the server's current definition when it differs.
	Live *Definition `json:"live,omitempty"`

	pinnedHash string
}

// Definition is what is pinned of a tool.
type Definition struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Installed is the result of installing: the app, and the setup form the
// person fills in the app (a connector card) when variables are missing.
type Installed struct {
	Connector Connector `json:"connector"`
	// Form is nil when nothing is left to fill. For an oauth app the form
	// holds only its client credentials, if any; the sign-in itself is a
	// browser flow (StartAuth).
	Form *pause.ConnectorRequest `json:"form"`
}

// Custom is a custom MCP server: a URL with headers, or a command with args
// and env. Values may hold ${NAME} references to workspace variables; the
// value of a header or env entry that looks like a credential (its name says
// auth, token, key, secret, password or cookie) must be one.
type Custom struct {
	Name string `json:"name"`
	// Transport is http (the default with a URL), sse, or stdio (the
	// default with a command).
	Transport string            `json:"transport"`
	URL       string            `json:"url"`
	Headers   map[string]string `json:"headers"`
	Command   string            `json:"command"`
	Args      []string          `json:"args"`
	Env       map[string]string `json:"env"`
	// OAuth signs in through the browser (MCP authorization) instead of
	// headers; remote servers only.
	OAuth bool `json:"oauth"`
}

const (
	maxNameLen  = 80
	maxValueLen = 8 << 10
	maxArgs     = 64
	maxEntries  = 64
)

var credentialName = regexp.MustCompile(`(?i)auth|token|key|secret|passw|cookie`)

var agentIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Install declares a catalog app on an agent: a built-in one by id, or a
// registry server by its registry name (namespace/name). Installing an app
// the agent already has returns it as it is.
func (s *Service) Install(ctx context.Context, agentID, catalogID string) (Installed, error) {
	if IsRegistryID(catalogID) {
		return s.installRegistry(ctx, agentID, catalogID)
	}
	app, ok := s.catalog.Get(catalogID)
	if !ok {
		return Installed{}, fault.NotFound("no app %q in the catalog; search the catalog for its id", catalogID)
	}
	var oauth *OAuth
	if app.Auth == AuthOAuth {
		o := OAuth{}
		if app.OAuth != nil {
			o = *app.OAuth
		}
		oauth = &o
	}
	return s.insert(ctx, agentID, slugOf(app.ID), app.ID, app.Name, app.Auth, app.Transport, oauth, "")
}

// AddCustom registers a custom MCP server on an agent. Its tool prefix is
// its name made [a-z0-9_]; two servers of one agent cannot share it.
func (s *Service) AddCustom(ctx context.Context, agentID string, c Custom) (Installed, error) {
	t, auth, oauth, err := c.transport()
	if err != nil {
		return Installed{}, err
	}
	name := strings.TrimSpace(c.Name)
	slug := customSlug(name)
	if slug == "" {
		return Installed{}, fault.Invalid("give the server a name with letters or digits (it prefixes its tools)")
	}
	if existing, err := s.bySlug(ctx, agentID, slug); err == nil {
		return Installed{}, fault.Conflict("this agent already has an app using the prefix %s (%s); choose another name", slug, existing.Name)
	} else if !errors.Is(err, fault.ErrNotFound) {
		return Installed{}, err
	}
	return s.insert(ctx, agentID, slug, "", name, auth, t, oauth, "")
}

// transport checks a custom server's form.
func (c Custom) transport() (Transport, string, *OAuth, error) {
	name := strings.TrimSpace(c.Name)
	switch {
	case name == "":
		return Transport{}, "", nil, fault.Invalid("give the server a name")
	case utf8.RuneCountInString(name) > maxNameLen:
		return Transport{}, "", nil, fault.Invalid("the name is longer than %d characters", maxNameLen)
	case (c.URL == "") == (c.Command == ""):
		return Transport{}, "", nil, fault.Invalid("give either a URL (a remote server) or a command (a local one), not both")
	case len(c.Args) > maxArgs || len(c.Env) > maxEntries || len(c.Headers) > maxEntries:
		return Transport{}, "", nil, fault.Invalid("too many args, env entries or headers (at most %d each)", maxEntries)
	}
	t := Transport{Type: c.Transport, URL: strings.TrimSpace(c.URL), Headers: c.Headers,
		Command: strings.TrimSpace(c.Command), Args: c.Args, Env: c.Env}
	if t.Type == "" {
		t.Type = TransportHTTP
		if t.Command != "" {
			t.Type = TransportStdio
		}
	}
	if err := t.check(false); err != nil {
		return Transport{}, "", nil, err
	}
	for _, s := range t.strings() {
		if len(s) > maxValueLen {
			return Transport{}, "", nil, fault.Invalid("a value is longer than %d bytes", maxValueLen)
		}
	}
	for _, m := range []map[string]string{t.Headers, t.Env} {
		for k, v := range m {
			if credentialName.MatchString(k) && v != "" && !strings.Contains(v, "${") {
				return Transport{}, "", nil, fault.Invalid("%s looks like a credential: store it in a workspace variable (Settings → Variables) and write ${NAME} here, so it is never saved in the app's configuration", k)
			}
		}
	}
	auth := AuthNone
	var oauth *OAuth
	refs, _ := t.references()
	for _, r := range refs {
		if !pause.ValidVariable(r) {
			return Transport{}, "", nil, fault.Invalid("${%s}: workspace variable names are UPPER_CASE letters, digits and _", r)
		}
	}
	if len(refs) > 0 {
		auth = AuthAPIKey
	}
	if c.OAuth {
		if t.Type == TransportStdio {
			return Transport{}, "", nil, fault.Invalid("browser sign-in (OAuth) is for remote servers; a local command gets its credentials through env")
		}
		auth, oauth = AuthOAuth, &OAuth{}
	}
	return t, auth, oauth, nil
}

func (s *Service) insert(ctx context.Context, agentID, slug, catalogID, name, auth string, t Transport, oauth *OAuth, appJSON string) (Installed, error) {
	if !agentIDRE.MatchString(agentID) {
		return Installed{}, fault.Invalid("bad agent id %q", agentID)
	}
	config, err := json.Marshal(t)
	if err != nil {
		return Installed{}, fmt.Errorf("encode connector config: %w", err)
	}
	oauthJSON := ""
	if oauth != nil {
		b, _ := json.Marshal(oauth)
		oauthJSON = string(b)
	}
	id := store.NewID("cn")
	now := store.FormatTime(s.now())
	created := false
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM agents WHERE id = ?`, agentID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fault.NotFound("no agent %q", agentID)
		}
		var existing, existingCatalog string
		err := tx.QueryRowContext(ctx, `SELECT id, catalog_id FROM connectors WHERE agent_id = ? AND slug = ?`, agentID, slug).Scan(&existing, &existingCatalog)
		switch {
		case err == nil && catalogID != "" && existingCatalog == catalogID:
			id = existing
			return nil
		case err == nil:
			return fault.Conflict("this agent already has an app using the prefix %s; uninstall it first", slug)
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		created = true
		_, err = tx.ExecContext(ctx, `INSERT INTO connectors (id, agent_id, slug, catalog_id, name, auth, config, oauth, app, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, agentID, slug, catalogID, name, auth, string(config), oauthJSON, appJSON, now, now)
		return err
	})
	if err != nil {
		return Installed{}, fmt.Errorf("install %s on agent %s: %w", name, agentID, err)
	}
	c, err := s.Get(ctx, id)
	if err != nil {
		return Installed{}, err
	}
	if created {
		s.publish(KindCreated, c)
	}
	out := Installed{Connector: c}
	if len(c.Missing) > 0 {
		if f := s.form(c); len(f.Fields) > 0 {
			out.Form = &f
		}
	}
	return out, nil
}

// Uninstall removes an app from its agent and ends its connection (and
// process). Variables it used stay: they belong to the workspace.
func (s *Service) Uninstall(ctx context.Context, id string) error {
	c, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM connectors WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("uninstall %s: %w", c.Name, err)
	}
	s.forget(id)
	s.publish(KindDeleted, c)
	return nil
}

const connectorColumns = `id, agent_id, slug, catalog_id, name, auth, config, oauth, app, status, error, pinned_at, checked_at, created_at, updated_at`

func scanConnector(r store.Scanner) (Connector, error) {
	var c Connector
	var config, oauth, app string
	var pinned, checked sql.NullString
	var created, updated string
	if err := r.Scan(&c.ID, &c.AgentID, &c.Slug, &c.CatalogID, &c.Name, &c.Auth, &config, &oauth, &app, &c.Status, &c.Error,
		&pinned, &checked, &created, &updated); err != nil {
		return c, err
	}
	if err := json.Unmarshal([]byte(config), &c.Transport); err != nil {
		return c, fmt.Errorf("connector %s: bad config: %w", c.ID, err)
	}
	if oauth != "" {
		c.OAuth = &OAuth{}
		if err := json.Unmarshal([]byte(oauth), c.OAuth); err != nil {
			return c, fmt.Errorf("connector %s: bad oauth settings: %w", c.ID, err)
		}
	}
	switch {
	case app != "":
		c.app = &App{}
		if err := json.Unmarshal([]byte(app), c.app); err != nil {
			return c, fmt.Errorf("connector %s: bad registry entry: %w", c.ID, err)
		}
		c.Source, c.Icon = SourceRegistry, c.app.Icon
	case c.CatalogID != "":
		c.Source = SourceBuiltin
	default:
		c.Source = "custom"
	}
	if pinned.Valid {
		t := store.ParseTime(pinned.String)
		c.PinnedAt = &t
	}
	if checked.Valid {
		t := store.ParseTime(checked.String)
		c.CheckedAt = &t
	}
	c.CreatedAt, c.UpdatedAt = store.ParseTime(created), store.ParseTime(updated)
	return c, nil
}

// Get returns one installed app.
func (s *Service) Get(ctx context.Context, id string) (Connector, error) {
	list, err := s.query(ctx, `WHERE id = ?`, id)
	if err != nil {
		return Connector{}, err
	}
	if len(list) == 0 {
		return Connector{}, fault.NotFound("no installed app %q", id)
	}
	return list[0], nil
}

func (s *Service) bySlug(ctx context.Context, agentID, slug string) (Connector, error) {
	list, err := s.query(ctx, `WHERE agent_id = ? AND slug = ?`, agentID, slug)
	if err != nil {
		return Connector{}, err
	}
	if len(list) == 0 {
		return Connector{}, fault.NotFound("agent %s has no app %s", agentID, slug)
	}
	return list[0], nil
}

// List returns the apps installed on an agent, oldest first; agentID ""
// lists those of every agent of the workspace.
func (s *Service) List(ctx context.Context, agentID string) ([]Connector, error) {
	if agentID == "" {
		return s.query(ctx, ``)
	}
	return s.query(ctx, `WHERE agent_id = ?`, agentID)
}

// query loads connectors with their tools and computes what is missing.
func (s *Service) query(ctx context.Context, where string, args ...any) ([]Connector, error) {
	list, err := store.Query(ctx, s.db, scanConnector, `SELECT `+connectorColumns+` FROM connectors `+where+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list connectors: %w", err)
	}
	for i := range list {
		c := &list[i]
		if c.Tools, err = s.tools(ctx, c.ID, c.Slug); err != nil {
			return nil, err
		}
		if c.app != nil {
			c.Skill = draftSkill(c.Slug, *c.app, c.Tools)
		} else if c.Source == SourceBuiltin {
			if a, ok := s.catalog.Get(c.CatalogID); ok {
				c.Icon = a.Icon
			}
		}
		s.settle(c)
	}
	return list, nil
}

// settle fills Variables, Missing, Next and the effective status: a missing
// variable wins over the last connection's outcome.
func (s *Service) settle(c *Connector) {
	refs, _ := c.Transport.references()
	if c.OAuth != nil {
		for _, n := range []string{c.OAuth.ClientIDVar, c.OAuth.ClientSecretVar} {
			if n != "" {
				refs = append(refs, n)
			}
		}
	}
	c.Variables = refs
	c.Missing = []string{}
	for _, n := range refs {
		if _, ok := s.lookup(n); !ok {
			c.Missing = append(c.Missing, n)
		}
	}
	if c.Auth == AuthOAuth {
		if _, ok := s.lookup(c.tokenVariable()); !ok {
			c.Missing = append(c.Missing, c.tokenVariable())
		}
	}
	if len(c.Missing) > 0 {
		c.Status = StatusNeedsSignIn
	}
	switch {
	case c.Status == StatusNeedsSignIn && c.Auth == AuthOAuth && len(c.Missing) == 1 && c.Missing[0] == c.tokenVariable():
		c.Next = fmt.Sprintf("Sign in to %s with the browser from the agent's Apps tab.", c.Name)
	case c.Status == StatusNeedsSignIn && len(c.Missing) > 0:
		c.Next = fmt.Sprintf("Fill the setup form of %s in the agent's Apps tab (%s).", c.Name, strings.Join(c.Missing, ", "))
	case c.Status == StatusNeedsSignIn:
		c.Next = fmt.Sprintf("%s refused the credentials: sign in again from the agent's Apps tab.", c.Name)
	case c.Status == StatusBlockedChanged:
		c.Next = fmt.Sprintf("%s changed some of its tools: review and approve them in the agent's Apps tab.", c.Name)
	case c.Status == StatusError:
		c.Next = fmt.Sprintf("%s could not be reached: check it with Test in the agent's Apps tab.", c.Name)
	}
}

// tokenVariable names the variable holding an oauth app's token.
func (c Connector) tokenVariable() string {
	if c.CatalogID == "" {
		// Custom slugs are unique per agent only; the id keeps tokens apart.
		return "MCP_" + strings.ToUpper(strings.TrimPrefix(c.ID, "cn_")) + oauthTokenSuffix
	}
	return varPrefix(c.Slug) + strings.TrimPrefix(oauthTokenSuffix, "_")
}

// formConnector is the connector name of the setup form, which prefixes
// the variables its secret fields are stored in.
func (c Connector) formConnector() string {
	if c.CatalogID != "" && c.app == nil {
		return c.CatalogID
	}
	return c.Slug
}

// Form returns an app's setup form: one secret field per variable it needs
// whose name starts with the app's prefix (field api_key ↔ variable
// <PREFIX>_API_KEY). Fields of variables already set are optional: leave
// them empty to keep the value.
func (s *Service) Form(ctx context.Context, id string) (pause.ConnectorRequest, error) {
	c, err := s.Get(ctx, id)
	if err != nil {
		return pause.ConnectorRequest{}, err
	}
	return s.form(c), nil
}

func (s *Service) form(c Connector) pause.ConnectorRequest {
	req := pause.ConnectorRequest{Connector: c.formConnector(), Title: "Connect " + c.Name, Fields: []pause.Field{}}
	prefix := varPrefix(c.Slug)
	var app App
	if c.app != nil {
		app = *c.app
		req.Description = app.Description + " (From the MCP Registry: not reviewed by Rerun.)"
	} else if c.CatalogID != "" {
		app, _ = s.catalog.Get(c.CatalogID)
		req.Description = app.Description
	}
	var elsewhere []string
	for _, n := range c.Variables {
		field := fieldOf(prefix, n)
		if !strings.HasPrefix(n, prefix) || !fieldNameRE.MatchString(field) || req.SecretVariable(field) != n {
			elsewhere = append(elsewhere, n)
			continue
		}
		_, set := s.lookup(n)
		f := pause.Field{Name: field, Label: n, Type: pause.FieldSecret, Required: !set, Options: []string{}}
		if c.app != nil && !app.Secret[n] {
			// A setting, not a credential: still kept in a variable, as
			// the server reads it from there.
			f.Help = strings.TrimSpace(f.Help + " (A setting, not a secret.)")
		}
		for _, v := range app.Variables {
			if v.Name == n {
				f.Label, f.Help = v.Label, v.Help
				if v.URL != "" {
					f.Help += " Get it at " + v.URL
				}
			}
		}
		if set {
			f.Placeholder = "already set — leave empty to keep it"
		}
		req.Fields = append(req.Fields, f)
	}
	if len(elsewhere) > 0 {
		req.Description = strings.TrimSpace(req.Description + " Also set in Settings → Variables: " + strings.Join(elsewhere, ", ") + ".")
	}
	if c.Auth == AuthOAuth {
		req.Description = strings.TrimSpace(req.Description + " Then sign in with the browser from the agent's Apps tab.")
	}
	return req
}

// SignIn stores a filled setup form: each non-empty value goes into the
// variable its field maps to (as a connector card's answer does), and the
// app reconnects on next use. values are keyed by field name.
func (s *Service) SignIn(ctx context.Context, id string, values map[string]string) (Connector, error) {
	c, err := s.Get(ctx, id)
	if err != nil {
		return Connector{}, err
	}
	if s.vars == nil {
		return Connector{}, fault.Invalid("this workspace has no variables store")
	}
	form := s.form(c)
	fields := map[string]bool{}
	for _, f := range form.Fields {
		fields[f.Name] = true
	}
	for name, v := range values {
		if !fields[name] {
			return Connector{}, fault.Invalid("%q is not a field of %s's setup form", name, c.Name)
		}
		if v == "" {
			continue
		}
		if err := pause.CheckValue(v); err != nil {
			return Connector{}, err
		}
	}
	for _, f := range form.Fields {
		if v := values[f.Name]; v != "" {
			if _, err := s.vars.Set(ctx, form.SecretVariable(f.Name), v); err != nil {
				return Connector{}, fmt.Errorf("store %s: %w", f.Label, err)
			}
		} else if f.Required {
			return Connector{}, fault.Invalid("%s is required", f.Label)
		}
	}
	return s.reset(ctx, c)
}

// reset forgets the connection and the last outcome after credentials
// changed, so the next use connects afresh.
func (s *Service) reset(ctx context.Context, c Connector) (Connector, error) {
	s.drop(c.ID)
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE connectors SET status = ?, error = '', updated_at = ? WHERE id = ?`,
			StatusUntested, store.FormatTime(s.now()), c.ID)
		return err
	})
	if err != nil {
		return Connector{}, fmt.Errorf("update %s: %w", c.Name, err)
	}
	c, err = s.Get(ctx, c.ID)
	if err != nil {
		return Connector{}, err
	}
	s.publish(KindUpdated, c)
	return c, nil
}

// tools loads the tool rows of a connector, sorted by name, with the names
// the agent calls them by.
func (s *Service) tools(ctx context.Context, id, slug string) ([]ToolInfo, error) {
	type row struct {
		name, pinnedHash, pinned, liveHash, live string
	}
	rows, err := store.Query(ctx, s.db, func(r store.Scanner) (row, error) {
		var x row
		err := r.Scan(&x.name, &x.pinnedHash, &x.pinned, &x.liveHash, &x.live)
		return x, err
	}, `SELECT name, pinned_hash, pinned, live_hash, live FROM connector_tools WHERE connector_id = ? ORDER BY name`, id)
	if err != nil {
		return nil, fmt.Errorf("list tools of %s: %w", id, err)
	}
	out := []ToolInfo{}
	taken := map[string]bool{}
	for _, x := range rows {
		ti := ToolInfo{Name: x.name, pinnedHash: x.pinnedHash}
		var pinned, live Definition
		if x.pinned != "" {
			json.Unmarshal([]byte(x.pinned), &pinned)
		}
		if x.live != "" {
			json.Unmarshal([]byte(x.live), &live)
		}
		switch {
		case x.pinnedHash == "":
			ti.State, ti.Definition = ToolNew, live
		case x.liveHash == "":
			ti.State, ti.Definition = ToolRemoved, pinned
		case x.liveHash != x.pinnedHash:
			ti.State, ti.Definition, ti.Live = ToolChanged, pinned, &live
		default:
			ti.State, ti.Definition = ToolApproved, pinned
		}
		ti.AgentName = toolName(slug, x.name, taken)
		taken[ti.AgentName] = true
		out = append(out, ti)
	}
	return out, nil
}
