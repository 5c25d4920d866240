package connector

import (
	"bytes"
	_ "embed"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/skill"
)

//go:embed catalog.yaml
var catalogYAML []byte

// Auth kinds of an app.
const (
	AuthNone   = "none"    // nothing to fill
	AuthAPIKey = "api_key" // variables the person fills in a form
	AuthOAuth  = "oauth"   // a browser sign-in (MCP authorization), token kept in a variable
)

// Transport types.
const (
	TransportStdio = "stdio" // a local command speaking MCP on stdin/stdout
	TransportHTTP  = "http"  // Streamable HTTP (falls back to legacy SSE when the server is one)
	TransportSSE   = "sse"   // the legacy HTTP+SSE transport
)

// Catalog is the list of apps an agent can install, versioned so a change of
// what installs is visible in the data file's history.
type Catalog struct {
	Version int   `json:"version" yaml:"version"`
	Apps    []App `json:"apps" yaml:"apps"`
}

// App is one catalog entry: an MCP server declaration and the skill that
// explains its tools to the agent.
type App struct {
	// ID is lowercase letters, digits and single hyphens. It is the app's
	// skill name; with - written _, its tool prefix (google-maps →
	// google_maps__search) and the prefix of its variables (GOOGLE_MAPS_…).
	ID          string     `json:"id" yaml:"id"`
	Name        string     `json:"name" yaml:"name"`
	Description string     `json:"description" yaml:"description"`
	Category    string     `json:"category" yaml:"category"`
	Keywords    []string   `json:"keywords" yaml:"keywords"`
	Homepage    string     `json:"homepage" yaml:"homepage"`
	Auth        string     `json:"auth" yaml:"auth"`
	Transport   Transport  `json:"transport" yaml:"transport"`
	Variables   []Variable `json:"variables" yaml:"variables"`
	OAuth       *OAuth     `json:"oauth,omitempty" yaml:"oauth"`
	// Skill is the SKILL.md text (front matter name = ID, description).
	Skill string `json:"skill" yaml:"skill"`
	// Icon is an https or data: image URL, or for a built-in app the name
	// of a bundled icon; "" shows a letter.
	Icon string `json:"icon,omitempty" yaml:"icon"`

	// Source is builtin (curated and reviewed: this file) or registry (an
	// MCP Registry server: not reviewed by Rerun, ID its registry name).
	Source string `json:"source" yaml:"-"`
	// Version, Runtime (npm, pypi, streamable-http, sse) and Needs (why it
	// cannot install on this computer, "" when it can) of a registry app.
	Version string `json:"version,omitempty" yaml:"-"`
	Runtime string `json:"runtime,omitempty" yaml:"-"`
	Needs   string `json:"needs,omitempty" yaml:"-"`
	// Secret marks the variables of a registry app that are secrets
	// (the others are plain text fields of its setup form).
	Secret map[string]bool `json:"secret,omitempty" yaml:"-"`
}

// Transport says how to reach an MCP server. Strings may hold ${NAME}
// references to workspace variables, resolved only when connecting.
type Transport struct {
	Type    string            `json:"type" yaml:"type"`
	Command string            `json:"command,omitempty" yaml:"command"`
	Args    []string          `json:"args,omitempty" yaml:"args"`
	Env     map[string]string `json:"env,omitempty" yaml:"env"`
	URL     string            `json:"url,omitempty" yaml:"url"`
	Headers map[string]string `json:"headers,omitempty" yaml:"headers"`
}

// Variable is a workspace variable an app needs.
type Variable struct {
	Name  string `json:"name" yaml:"name"`
	Label string `json:"label" yaml:"label"`
	Help  string `json:"help" yaml:"help"`
	URL   string `json:"url" yaml:"url"` // where to get it
}

// OAuth tunes the browser sign-in of an app whose auth is oauth. Servers
// without dynamic client registration name the variables holding the client
// credentials the person registered with the provider.
type OAuth struct {
	Scopes          []string `json:"scopes,omitempty" yaml:"scopes"`
	ClientIDVar     string   `json:"client_id_var,omitempty" yaml:"client_id_var"`
	ClientSecretVar string   `json:"client_secret_var,omitempty" yaml:"client_secret_var"`
}

// LoadCatalog parses the embedded catalog and checks every entry.
func LoadCatalog() (*Catalog, error) {
	return ParseCatalog(catalogYAML)
}

// ParseCatalog reads a catalog data file and checks every entry.
func ParseCatalog(data []byte) (*Catalog, error) {
	var c Catalog
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("parse app catalog: %w", err)
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	for i := range c.Apps {
		c.Apps[i].Source = SourceBuiltin
	}
	return &c, nil
}

var (
	appIDRE    = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	envNameRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	headerRE   = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+.^_|~-]+$`)
	categories = []string{"ai", "automation", "browser", "cloud", "communication", "crm", "data", "design",
		"developer", "files", "knowledge", "maps", "monitoring", "payments", "productivity", "reasoning", "search", "utilities", "web"}
)

// Check validates every entry: unique ids, required fields, a complete
// transport, declared variables exactly those the transport references
// (named after the app so its setup form maps onto them), a SKILL.md that
// parses with name = id and mentions the app's tool prefix.
func (c *Catalog) Check() error {
	if c.Version < 1 {
		return fmt.Errorf("app catalog: version must be 1 or more")
	}
	seen := map[string]bool{}
	for i := range c.Apps {
		a := &c.Apps[i]
		if err := a.check(); err != nil {
			return fmt.Errorf("app catalog entry %d (%q): %w", i, a.ID, err)
		}
		if seen[a.ID] {
			return fmt.Errorf("app catalog: id %q appears twice", a.ID)
		}
		seen[a.ID] = true
	}
	return nil
}

func (a *App) check() error {
	switch {
	case !appIDRE.MatchString(a.ID) || len(a.ID) > 40:
		return fmt.Errorf("id must be lowercase letters, digits and single hyphens, at most 40")
	case strings.TrimSpace(a.Name) == "":
		return fmt.Errorf("name is empty")
	case strings.TrimSpace(a.Description) == "":
		return fmt.Errorf("description is empty")
	case !slices.Contains(categories, a.Category):
		return fmt.Errorf("category %q is not one of %s", a.Category, strings.Join(categories, ", "))
	case !slices.Contains([]string{AuthNone, AuthAPIKey, AuthOAuth}, a.Auth):
		return fmt.Errorf("auth %q must be none, api_key or oauth", a.Auth)
	}
	if u, err := url.Parse(a.Homepage); err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("homepage %q must be an https URL", a.Homepage)
	}
	if err := a.Transport.check(true); err != nil {
		return err
	}
	refs, err := a.Transport.references()
	if err != nil {
		return err
	}
	prefix := varPrefix(slugOf(a.ID))
	declared := map[string]bool{}
	for _, v := range a.Variables {
		switch {
		case declared[v.Name]:
			return fmt.Errorf("variable %s is declared twice", v.Name)
		case !pause.ValidVariable(v.Name) || !strings.HasPrefix(v.Name, prefix) || !fieldNameRE.MatchString(fieldOf(prefix, v.Name)):
			return fmt.Errorf("variable %q must be %sSOMETHING (upper case) so the setup form's field maps onto it", v.Name, prefix)
		case strings.HasSuffix(v.Name, oauthTokenSuffix):
			return fmt.Errorf("variable %s: names ending in %s are kept for OAuth tokens", v.Name, oauthTokenSuffix)
		case strings.TrimSpace(v.Label) == "" || strings.TrimSpace(v.Help) == "":
			return fmt.Errorf("variable %s needs a label and help text", v.Name)
		}
		if v.URL != "" {
			if u, err := url.Parse(v.URL); err != nil || u.Scheme != "https" || u.Host == "" {
				return fmt.Errorf("variable %s: url %q must be an https URL", v.Name, v.URL)
			}
		}
		declared[v.Name] = true
	}
	if a.OAuth != nil {
		if a.Auth != AuthOAuth {
			return fmt.Errorf("oauth settings on an app whose auth is %s", a.Auth)
		}
		for _, n := range []string{a.OAuth.ClientIDVar, a.OAuth.ClientSecretVar} {
			if n != "" {
				refs = append(refs, n)
			}
		}
	}
	if a.Auth == AuthOAuth && a.Transport.Type == TransportStdio {
		return fmt.Errorf("oauth needs a remote (http or sse) transport")
	}
	for _, r := range refs {
		if !declared[r] {
			return fmt.Errorf("the transport references ${%s}, which is not in variables", r)
		}
	}
	for n := range declared {
		if !slices.Contains(refs, n) {
			return fmt.Errorf("variable %s is declared but never referenced", n)
		}
	}
	if a.Auth == AuthAPIKey && len(a.Variables) == 0 {
		return fmt.Errorf("auth api_key without any variable to fill")
	}
	if a.Auth == AuthNone && len(a.Variables) > 0 && a.Transport.Type != TransportStdio {
		return fmt.Errorf("a remote app with variables has auth api_key, not none")
	}
	sk, err := skill.Parse([]byte(a.Skill))
	if err != nil {
		return fmt.Errorf("skill: %s", fault.Message(err))
	}
	if sk.Name != a.ID {
		return fmt.Errorf("skill name %q must be the app id", sk.Name)
	}
	if !strings.Contains(sk.Body, slugOf(a.ID)+"__") {
		return fmt.Errorf("skill body never names a tool as %s__<tool>", slugOf(a.ID))
	}
	return nil
}

// check validates a transport; strict (the catalog) also refuses plain
// http URLs.
func (t *Transport) check(strict bool) error {
	switch t.Type {
	case TransportStdio:
		if strings.TrimSpace(t.Command) == "" {
			return fault.Invalid("a stdio server needs a command (e.g. npx)")
		}
		if t.URL != "" || len(t.Headers) > 0 {
			return fault.Invalid("a stdio server takes a command, args and env, not a URL or headers")
		}
		for k := range t.Env {
			if !envNameRE.MatchString(k) {
				return fault.Invalid("environment variable name %q must be letters, digits and _", k)
			}
		}
	case TransportHTTP, TransportSSE:
		if strings.TrimSpace(t.URL) == "" {
			return fault.Invalid("a remote server needs a URL")
		}
		if t.Command != "" || len(t.Args) > 0 || len(t.Env) > 0 {
			return fault.Invalid("a remote server takes a URL and headers, not a command")
		}
		if !strings.HasPrefix(t.URL, "${") {
			u, err := url.Parse(t.URL)
			if err != nil || u.Host == "" || u.Scheme != "https" && (strict || u.Scheme != "http") {
				return fault.Invalid("URL %q must start with https:// (or http:// for a server on this computer)", t.URL)
			}
		}
		for k, v := range t.Headers {
			if !headerRE.MatchString(k) {
				return fault.Invalid("header name %q is not a valid HTTP header name", k)
			}
			if strings.ContainsAny(v, "\r\n") {
				return fault.Invalid("header %s holds a line break", k)
			}
		}
	default:
		return fault.Invalid("transport type %q must be stdio, http or sse", t.Type)
	}
	_, err := t.references()
	return err
}

// strings lists every string of the transport that may hold ${NAME}.
func (t *Transport) strings() []string {
	out := []string{t.Command, t.URL}
	out = append(out, t.Args...)
	for _, k := range sortedKeys(t.Env) {
		out = append(out, t.Env[k])
	}
	for _, k := range sortedKeys(t.Headers) {
		out = append(out, t.Headers[k])
	}
	return out
}

// references returns the variable names the transport uses, sorted, or an
// error for a malformed reference.
func (t *Transport) references() ([]string, error) {
	found := map[string]bool{}
	for _, s := range t.strings() {
		if _, err := secret.Resolve(s, func(name string) (string, bool) { found[name] = true; return "", true }); err != nil {
			return nil, err
		}
	}
	return sortedKeys(found), nil
}

// resolve returns a copy with every ${NAME} replaced through resolve.
func (t Transport) resolve(resolve func(string) (string, error)) (Transport, error) {
	var err error
	one := func(s string) string {
		if err != nil {
			return ""
		}
		var v string
		v, err = resolve(s)
		return v
	}
	out := Transport{Type: t.Type, Command: one(t.Command), URL: one(t.URL)}
	for _, a := range t.Args {
		out.Args = append(out.Args, one(a))
	}
	if len(t.Env) > 0 {
		out.Env = map[string]string{}
		for k, v := range t.Env {
			out.Env[k] = one(v)
		}
	}
	if len(t.Headers) > 0 {
		out.Headers = map[string]string{}
		for k, v := range t.Headers {
			out.Headers[k] = one(v)
			if strings.ContainsAny(out.Headers[k], "\r\n") && err == nil {
				err = fault.Invalid("header %s holds a line break once its variables are filled in", k)
			}
		}
	}
	return out, err
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Get returns the app with id.
func (c *Catalog) Get(id string) (App, bool) {
	for _, a := range c.Apps {
		if a.ID == id {
			return a, true
		}
	}
	return App{}, false
}

// Find returns the app a person or an agent names: by id, or by name
// whatever the case ("GitHub", "google maps").
func (c *Catalog) Find(ref string) (App, bool) {
	ref = strings.TrimSpace(ref)
	if a, ok := c.Get(strings.ToLower(ref)); ok {
		return a, true
	}
	for _, a := range c.Apps {
		if strings.EqualFold(a.Name, ref) {
			return a, true
		}
	}
	return App{}, false
}

// Search returns the apps matching every word of query (by id, name,
// category, keywords, description, then skill text), best first; an empty
// query lists them all by name. limit ≤ 0 means no limit.
func (c *Catalog) Search(query string, limit int) []App {
	words := strings.Fields(strings.ToLower(query))
	type scored struct {
		app   App
		score int
	}
	var hits []scored
	for _, a := range c.Apps {
		total := 0
		for _, w := range words {
			s := a.score(w)
			if s == 0 {
				total = 0
				break
			}
			total += s
		}
		if len(words) == 0 {
			total = 1
		}
		if total > 0 {
			hits = append(hits, scored{a, total})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return strings.ToLower(hits[i].app.Name) < strings.ToLower(hits[j].app.Name)
	})
	out := []App{}
	for _, h := range hits {
		if limit > 0 && len(out) == limit {
			break
		}
		out = append(out, h.app)
	}
	return out
}

// score rates how well one lowercase query word matches the app.
func (a App) score(w string) int {
	name := strings.ToLower(a.Name)
	best := 0
	up := func(s int) {
		if s > best {
			best = s
		}
	}
	switch {
	case a.ID == w || name == w:
		up(100)
	case strings.HasPrefix(a.ID, w) || strings.HasPrefix(name, w):
		up(60)
	case slices.Contains(tokens(name), w):
		up(50)
	case strings.Contains(name, w):
		up(30)
	}
	if a.Category == w {
		up(40)
	} else if strings.HasPrefix(a.Category, w) {
		up(25)
	}
	for _, k := range a.Keywords {
		k = strings.ToLower(k)
		if k == w {
			up(35)
		} else if strings.HasPrefix(k, w) {
			up(20)
		}
	}
	if slices.Contains(tokens(strings.ToLower(a.Description)), w) {
		up(15)
	} else if strings.Contains(strings.ToLower(a.Description), w) {
		up(8)
	}
	if best == 0 && strings.Contains(strings.ToLower(a.Skill), w) {
		up(2)
	}
	return best
}

// tokens splits s into words of letters and digits.
func tokens(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r > 127)
	})
}
