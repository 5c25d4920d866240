package connector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// The official MCP Registry's read API (and that of any sub-registry a
// company runs): GET /v0.1/servers?search=&cursor=&limit= lists servers,
// GET /v0.1/servers/{name}/versions/latest returns one. Each server is a
// server.json document: its name, description, packages (npm, pypi, oci)
// and remotes (streamable-http, sse).

// DefaultRegistryURL is the official MCP Registry.
const DefaultRegistryURL = "https://registry.modelcontextprotocol.io"

// Bounds on what the registry may send.
const (
	maxRegistryBody    = 4 << 20 // one answer
	maxRegistryServers = 100     // servers in one list answer
	maxRegistryText    = 2000    // a description as shown; longer ones are cut
	maxRegistryName    = 200
	maxRegistryItems   = 32 // packages, remotes, variables, args, headers, icons
)

// Source of a catalog entry.
const (
	SourceBuiltin  = "builtin"
	SourceRegistry = "registry"
)

// registryList is GET /v0.1/servers's answer.
type registryList struct {
	Servers  []registryEntry `json:"servers"`
	Metadata struct {
		NextCursor string `json:"nextCursor"`
		Count      int    `json:"count"`
	} `json:"metadata"`
}

// registryEntry is one ServerResponse: the server.json and the registry's
// own metadata about it.
type registryEntry struct {
	Server ServerJSON                 `json:"server"`
	Meta   map[string]json.RawMessage `json:"_meta"`
}

// ServerJSON is the part of a server.json Rerun reads.
type ServerJSON struct {
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Version     string `json:"version"`
	WebsiteURL  string `json:"websiteUrl"`
	Repository  *struct {
		URL string `json:"url"`
	} `json:"repository"`
	Icons    []RegistryIcon    `json:"icons"`
	Packages []RegistryPackage `json:"packages"`
	Remotes  []RegistryRemote  `json:"remotes"`
}

// RegistryIcon is one of a server's icons.
type RegistryIcon struct {
	Src      string `json:"src"`
	MimeType string `json:"mimeType"`
	Theme    string `json:"theme"`
}

// RegistryPackage is a package that runs the server on this computer.
type RegistryPackage struct {
	RegistryType     string          `json:"registryType"` // npm | pypi | oci | nuget | mcpb
	RegistryBaseURL  string          `json:"registryBaseUrl"`
	Identifier       string          `json:"identifier"`
	Version          string          `json:"version"`
	RuntimeHint      string          `json:"runtimeHint"`
	Transport        RegistryPkgTr   `json:"transport"`
	RuntimeArguments []RegistryArg   `json:"runtimeArguments"`
	PackageArguments []RegistryArg   `json:"packageArguments"`
	EnvironmentVars  []RegistryInput `json:"environmentVariables"`
}

// RegistryPkgTr is how a package speaks MCP.
type RegistryPkgTr struct {
	Type string `json:"type"` // stdio | streamable-http | sse
	URL  string `json:"url"`
}

// RegistryArg is a positional or named package argument.
type RegistryArg struct {
	Type        string `json:"type"` // positional | named
	Name        string `json:"name"`
	Value       string `json:"value"`
	ValueHint   string `json:"valueHint"`
	Default     string `json:"default"`
	Description string `json:"description"`
	IsRequired  bool   `json:"isRequired"`
	IsSecret    bool   `json:"isSecret"`
}

// RegistryInput is an environment variable or a header the server needs.
type RegistryInput struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Value       string `json:"value"`
	Default     string `json:"default"`
	IsRequired  bool   `json:"isRequired"`
	IsSecret    bool   `json:"isSecret"`
}

// RegistryRemote is a server reachable over HTTP.
type RegistryRemote struct {
	Type    string          `json:"type"` // streamable-http | sse
	URL     string          `json:"url"`
	Headers []RegistryInput `json:"headers"`
}

var (
	// registry names are reverse-DNS namespace / server name.
	registryNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.-]*/[A-Za-z0-9][A-Za-z0-9._-]*$`)
	npmNameRE      = regexp.MustCompile(`^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$`)
	pypiNameRE     = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)
	pkgVersionRE   = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z.+_-]*$`)
	argNameRE      = regexp.MustCompile(`^--?[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	inputNameRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)
	// Characters a shell or a variable reference would give meaning to: a
	// literal argument holding one is refused rather than passed, though
	// no shell ever sees it.
	unsafeArg = "`$;|&<>(){}\\\"'\n\r\t\x00*?[]~!#"
)

// readRegistryList parses and bounds a list answer. Servers that fail
// validation are dropped, not fatal: one bad entry must not hide the rest.
func readRegistryList(r io.Reader) ([]ServerJSON, string, error) {
	body, err := readBounded(r)
	if err != nil {
		return nil, "", err
	}
	var l registryList
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, "", fmt.Errorf("the registry's answer is not a server list: %w", err)
	}
	if len(l.Servers) > maxRegistryServers {
		l.Servers = l.Servers[:maxRegistryServers]
	}
	out := []ServerJSON{}
	for _, e := range l.Servers {
		if e.Server.validate() == nil && !deletedEntry(e.Meta) {
			out = append(out, e.Server)
		}
	}
	cursor := l.Metadata.NextCursor
	if len(cursor) > 1000 {
		cursor = ""
	}
	return out, cursor, nil
}

// readRegistryServer parses one server's answer.
func readRegistryServer(r io.Reader) (ServerJSON, error) {
	body, err := readBounded(r)
	if err != nil {
		return ServerJSON{}, err
	}
	var e registryEntry
	if err := json.Unmarshal(body, &e); err != nil {
		return ServerJSON{}, fmt.Errorf("the registry's answer is not a server: %w", err)
	}
	if e.Server.Name == "" {
		// Some registries answer with the bare server.json.
		if err := json.Unmarshal(body, &e.Server); err != nil {
			return ServerJSON{}, fmt.Errorf("the registry's answer is not a server: %w", err)
		}
	}
	return e.Server, e.Server.validate()
}

func readBounded(r io.Reader) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, maxRegistryBody+1))
	if err != nil {
		return nil, fmt.Errorf("read the registry's answer: %w", err)
	}
	if len(body) > maxRegistryBody {
		return nil, fmt.Errorf("the registry's answer is larger than %d bytes", maxRegistryBody)
	}
	return bytes.TrimSpace(body), nil
}

// deletedEntry reports a server the registry marks deleted.
func deletedEntry(meta map[string]json.RawMessage) bool {
	var official struct {
		Status string `json:"status"`
	}
	if raw, ok := meta["io.modelcontextprotocol.registry/official"]; ok {
		json.Unmarshal(raw, &official)
	}
	return official.Status == "deleted"
}

// validate checks the shape and bounds the text of a server: it cuts long
// descriptions and drops lists beyond the bounds, and refuses a name that
// is not namespace/name.
func (s *ServerJSON) validate() error {
	if len(s.Name) > maxRegistryName || !registryNameRE.MatchString(s.Name) || strings.Contains(s.Name, "..") {
		return fault.Invalid("registry server name %q is not namespace/name", truncate(s.Name, 80))
	}
	s.Title = oneLine(truncate(s.Title, 100))
	s.Description = oneLine(truncate(s.Description, maxRegistryText))
	s.Version = truncate(s.Version, 100)
	if len(s.Packages) > maxRegistryItems {
		s.Packages = s.Packages[:maxRegistryItems]
	}
	if len(s.Remotes) > maxRegistryItems {
		s.Remotes = s.Remotes[:maxRegistryItems]
	}
	if len(s.Icons) > maxRegistryItems {
		s.Icons = s.Icons[:maxRegistryItems]
	}
	for i := range s.Packages {
		p := &s.Packages[i]
		if len(p.PackageArguments) > maxRegistryItems {
			p.PackageArguments = p.PackageArguments[:maxRegistryItems]
		}
		if len(p.EnvironmentVars) > maxRegistryItems {
			p.EnvironmentVars = p.EnvironmentVars[:maxRegistryItems]
		}
	}
	for i := range s.Remotes {
		if len(s.Remotes[i].Headers) > maxRegistryItems {
			s.Remotes[i].Headers = s.Remotes[i].Headers[:maxRegistryItems]
		}
	}
	if !utf8.ValidString(s.Description) || !utf8.ValidString(s.Title) {
		return fault.Invalid("registry server %s has text that is not UTF-8", s.Name)
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Icon returns the server's icon URL: an https (or data:image) source,
// the light-theme one first; "" when none.
func (s ServerJSON) Icon() string {
	best := ""
	for _, ic := range s.Icons {
		u, err := url.Parse(ic.Src)
		ok := err == nil && (u.Scheme == "https" && u.Host != "" || strings.HasPrefix(ic.Src, "data:image/png;base64,") || strings.HasPrefix(ic.Src, "data:image/svg+xml;base64,"))
		if !ok || len(ic.Src) > 64<<10 {
			continue
		}
		if best == "" || ic.Theme == "light" {
			best = ic.Src
		}
	}
	return best
}

// Runtimes is what this computer has to run servers with (exec.LookPath).
type Runtimes func(name string) bool

// plan is how a registry server would install here: the transport and
// the inputs that become setup fields, or why it cannot.
type plan struct {
	transport Transport
	variables []Variable
	secret    map[string]bool // variable name → a secret field
	kind      string          // npm | pypi | streamable-http | sse
	needs     string          // why it cannot install here, "" when it can
}

// plan chooses how to run s: an npm package through npx, a PyPI package
// through uvx, else a remote endpoint. Every literal it takes from the
// registry is checked; an input the person fills becomes a variable named
// after slug (<SLUG>_<INPUT>), and nothing the registry wrote can name
// another variable.
func (s ServerJSON) plan(slug string, has Runtimes) plan {
	var reasons []string
	for _, p := range s.Packages {
		var pl plan
		var err error
		switch p.RegistryType {
		case "npm":
			if !has("npx") {
				reasons = append(reasons, "its npm package needs Node.js (npx), which is not installed on this computer")
				continue
			}
			pl, err = p.stdio(slug, "npx")
		case "pypi":
			if !has("uvx") {
				reasons = append(reasons, "its PyPI package needs uv (uvx), which is not installed on this computer")
				continue
			}
			pl, err = p.stdio(slug, "uvx")
		case "oci":
			reasons = append(reasons, "its package is a Docker (OCI) image, which Rerun does not run")
			continue
		default:
			reasons = append(reasons, fmt.Sprintf("its %q package is of a kind Rerun does not run", truncate(p.RegistryType, 20)))
			continue
		}
		if err != nil {
			reasons = append(reasons, fault.Message(err))
			continue
		}
		return pl
	}
	for _, r := range s.Remotes {
		pl, err := r.plan(slug)
		if err != nil {
			reasons = append(reasons, fault.Message(err))
			continue
		}
		return pl
	}
	if len(reasons) == 0 {
		reasons = append(reasons, "it declares no package or remote endpoint")
	}
	return plan{needs: "Cannot install here: " + strings.Join(slices.Compact(reasons), "; ") + "."}
}

// stdio plans a package run by npx or uvx.
func (p RegistryPackage) stdio(slug, runner string) (plan, error) {
	if p.Transport.Type != "" && p.Transport.Type != "stdio" {
		return plan{}, fault.Invalid("its package serves over %s, which needs a URL Rerun cannot know", truncate(p.Transport.Type, 20))
	}
	if p.RegistryBaseURL != "" && p.RegistryBaseURL != "https://registry.npmjs.org" && p.RegistryBaseURL != "https://pypi.org" {
		return plan{}, fault.Invalid("its package comes from %s, not the public npm or PyPI registry", truncate(p.RegistryBaseURL, 60))
	}
	if len(p.RuntimeArguments) > 0 {
		return plan{}, fault.Invalid("its package asks for arguments to %s itself, which Rerun does not pass", runner)
	}
	pl := plan{transport: Transport{Type: TransportStdio, Command: runner}, secret: map[string]bool{}}
	spec := ""
	switch runner {
	case "npx":
		if !npmNameRE.MatchString(p.Identifier) || len(p.Identifier) > 214 {
			return plan{}, fault.Invalid("npm package name %q is not a valid package name", truncate(p.Identifier, 60))
		}
		spec, pl.kind = p.Identifier, "npm"
		if p.Version != "" {
			if !pkgVersionRE.MatchString(p.Version) || len(p.Version) > 64 {
				return plan{}, fault.Invalid("package version %q is not a version", truncate(p.Version, 30))
			}
			spec += "@" + p.Version
		}
		pl.transport.Args = []string{"-y", spec}
	case "uvx":
		if !pypiNameRE.MatchString(p.Identifier) || len(p.Identifier) > 100 {
			return plan{}, fault.Invalid("PyPI package name %q is not a valid package name", truncate(p.Identifier, 60))
		}
		spec, pl.kind = p.Identifier, "pypi"
		if p.Version != "" {
			if !pkgVersionRE.MatchString(p.Version) || len(p.Version) > 64 {
				return plan{}, fault.Invalid("package version %q is not a version", truncate(p.Version, 30))
			}
			spec += "==" + p.Version
		}
		pl.transport.Args = []string{spec}
	}
	for _, a := range p.PackageArguments {
		args, err := pl.arg(slug, a)
		if err != nil {
			return plan{}, err
		}
		pl.transport.Args = append(pl.transport.Args, args...)
	}
	for _, e := range p.EnvironmentVars {
		if !envNameRE.MatchString(e.Name) || len(e.Name) > 60 {
			return plan{}, fault.Invalid("environment variable name %q is not letters, digits and _", truncate(e.Name, 40))
		}
		v, ok, err := pl.input(slug, e.Name, e)
		if err != nil {
			return plan{}, err
		}
		if ok {
			if pl.transport.Env == nil {
				pl.transport.Env = map[string]string{}
			}
			pl.transport.Env[e.Name] = v
		}
	}
	return pl, pl.transport.check(true)
}

// arg turns one package argument into command-line words.
func (pl *plan) arg(slug string, a RegistryArg) ([]string, error) {
	in := RegistryInput{Name: a.Name, Description: a.Description, Value: a.Value, Default: a.Default, IsRequired: a.IsRequired, IsSecret: a.IsSecret}
	switch a.Type {
	case "named":
		if !argNameRE.MatchString(a.Name) || len(a.Name) > 60 {
			return nil, fault.Invalid("argument name %q is not a --flag", truncate(a.Name, 40))
		}
		v, ok, err := pl.input(slug, strings.TrimLeft(a.Name, "-"), in)
		if err != nil || !ok {
			return nil, err
		}
		return []string{a.Name, v}, nil
	case "positional", "":
		name := a.ValueHint
		if name == "" {
			name = a.Name
		}
		if name == "" {
			name = "arg"
		}
		v, ok, err := pl.input(slug, name, in)
		if err != nil || !ok {
			return nil, err
		}
		if strings.HasPrefix(v, "-") {
			return nil, fault.Invalid("positional argument %q starts with -, so it would be read as an option", truncate(v, 40))
		}
		return []string{v}, nil
	}
	return nil, fault.Invalid("argument type %q is not positional or named", truncate(a.Type, 20))
}

// input returns the value of one declared input: its fixed value or
// default when it has one that is safe, else a reference to a variable the
// setup form fills (skipped, ok false, when it is optional).
func (pl *plan) input(slug, name string, in RegistryInput) (string, bool, error) {
	fixed := in.Value
	if fixed == "" && !in.IsSecret {
		fixed = in.Default
	}
	if fixed != "" && !strings.Contains(fixed, "{") {
		if strings.ContainsAny(fixed, unsafeArg) || len(fixed) > 500 {
			return "", false, fault.Invalid("value %q holds characters a shell or a variable reference would read", truncate(fixed, 40))
		}
		if !in.IsSecret {
			return fixed, true, nil
		}
		// A secret written in the registry is not a secret: ask for it.
	}
	if !in.IsRequired && !in.IsSecret && fixed == "" {
		return "", false, nil
	}
	if !inputNameRE.MatchString(name) || len(name) > 40 {
		return "", false, fault.Invalid("input name %q is not letters, digits, - and _", truncate(name, 40))
	}
	v := varPrefix(slug) + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	if len(v) > 64 || !fieldNameRE.MatchString(fieldOf(varPrefix(slug), v)) {
		return "", false, fault.Invalid("input name %q is too long", truncate(name, 40))
	}
	for _, have := range pl.variables {
		if have.Name == v {
			return "${" + v + "}", true, nil
		}
	}
	help := strings.TrimSpace(oneLine(truncate(in.Description, 300)))
	if help == "" {
		help = "Asked for by the server's registry entry."
	}
	pl.variables = append(pl.variables, Variable{Name: v, Label: name, Help: help})
	pl.secret[v] = in.IsSecret
	if fixed != "" && strings.Contains(fixed, "{") {
		// "Bearer {token}": keep the literal around the one placeholder.
		i, j := strings.Index(fixed, "{"), strings.Index(fixed, "}")
		if j > i && strings.Count(fixed, "{") == 1 && strings.Count(fixed, "}") == 1 && !strings.ContainsAny(fixed[:i]+fixed[j+1:], unsafeArg) {
			return fixed[:i] + "${" + v + "}" + fixed[j+1:], true, nil
		}
	}
	return "${" + v + "}", true, nil
}

// plan plans a remote endpoint.
func (r RegistryRemote) plan(slug string) (plan, error) {
	pl := plan{secret: map[string]bool{}}
	switch r.Type {
	case "streamable-http":
		pl.transport.Type, pl.kind = TransportHTTP, "streamable-http"
	case "sse":
		pl.transport.Type, pl.kind = TransportSSE, "sse"
	default:
		return plan{}, fault.Invalid("remote type %q is not streamable-http or sse", truncate(r.Type, 20))
	}
	if strings.Contains(r.URL, "{") || strings.Contains(r.URL, "$") {
		return plan{}, fault.Invalid("its URL %q holds placeholders Rerun does not fill", truncate(r.URL, 80))
	}
	pl.transport.URL = r.URL
	for _, h := range r.Headers {
		if !headerRE.MatchString(h.Name) || len(h.Name) > 60 {
			return plan{}, fault.Invalid("header name %q is not an HTTP header name", truncate(h.Name, 40))
		}
		v, ok, err := pl.input(slug, h.Name, h)
		if err != nil {
			return plan{}, err
		}
		if ok {
			if pl.transport.Headers == nil {
				pl.transport.Headers = map[string]string{}
			}
			pl.transport.Headers[h.Name] = v
		}
	}
	return pl, pl.transport.check(true)
}
