package template

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/budget"
	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/schedule"
	"github.com/rerun-build/rerun-desktop/backend/trigger"
)

// SchemaVersion is the version of the package format this code writes and
// reads.
const SchemaVersion = 1

// Price labels. They are metadata: nothing here charges anything.
const (
	PriceFree = "free"
	PricePaid = "paid"
)

// Limits of a manifest, the same as the schema's.
const (
	MaxNameLen        = 80
	MaxDescriptionLen = 2000
	MaxAuthorLen      = 120
	MaxCategoryLen    = 60
	MaxSchedules      = 50
	MaxTriggers       = 50
	MaxConnectors     = 50
	MaxVariables      = 100
	MaxHelpLen        = 1000
)

// Manifest is template.json: what the template is and what the agent it
// makes needs. Its schema is schema/template.schema.json.
type Manifest struct {
	SchemaVersion int    `json:"schema_version"`
	Name          string `json:"name"`
	Description   string `json:"description"`
	Author        string `json:"author"`
	Category      string `json:"category"`
	Price         string `json:"price"`
	// Model is a suggestion; the person may pick another.
	Model Model `json:"model"`
	// Budget is the spend limits the author suggests; the installer
	// accepts, changes or clears them (InstallOptions.Budget).
	Budget       *budget.Limits  `json:"budget,omitempty"`
	Capabilities []string        `json:"capabilities"`
	AskFirst     map[string]bool `json:"ask_first"`
	Schedules    []Schedule      `json:"schedules"`
	Triggers     []Trigger       `json:"triggers"`
	Connectors   []Connector     `json:"connectors"`
	Variables    []Variable      `json:"variables"`
}

// Model names a model the author suggests.
type Model struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// Schedule is a scheduled task of a template; it is installed paused.
// Timezone "" means the installer's own zone.
type Schedule struct {
	Name        string     `json:"name"`
	Instruction string     `json:"instruction"`
	Kind        string     `json:"kind"`
	Cron        string     `json:"cron"`
	Timezone    string     `json:"timezone"`
	At          *time.Time `json:"at"`
	CatchUp     string     `json:"catch_up"`
}

// Trigger is a webhook trigger's definition: never its token. Installing
// makes a new URL.
type Trigger struct {
	Name        string   `json:"name"`
	Instruction string   `json:"instruction"`
	Methods     []string `json:"methods"`
}

// Connector declares a catalog app: installing asks the person to sign in.
type Connector struct {
	CatalogID string `json:"catalog_id"`
	Name      string `json:"name"`
}

// Variable is a workspace variable the agent needs: its name and where to
// get it, never a value.
type Variable struct {
	Name string `json:"name"`
	Help string `json:"help"`
	URL  string `json:"url"`
}

// normalize gives nil lists their empty value, so the JSON always has them.
func (m *Manifest) normalize() {
	if m.Capabilities == nil {
		m.Capabilities = []string{}
	}
	if m.AskFirst == nil {
		m.AskFirst = map[string]bool{}
	}
	if m.Schedules == nil {
		m.Schedules = []Schedule{}
	}
	if m.Triggers == nil {
		m.Triggers = []Trigger{}
	}
	for i := range m.Triggers {
		if m.Triggers[i].Methods == nil {
			m.Triggers[i].Methods = []string{}
		}
	}
	if m.Connectors == nil {
		m.Connectors = []Connector{}
	}
	if m.Variables == nil {
		m.Variables = []Variable{}
	}
}

var (
	variableNameRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`)
	catalogIDRE    = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
)

// text trims a text field and checks its length; field names it in the
// message.
func text(field, v string, max int, line bool) (string, error) {
	v = strings.TrimSpace(v)
	switch {
	case !utf8.ValidString(v):
		return "", fault.Invalid("%s is not valid UTF-8 text", field)
	case utf8.RuneCountInString(v) > max:
		return "", fault.Invalid("%s is %d characters; keep it to %d", field, utf8.RuneCountInString(v), max)
	case line && strings.IndexFunc(v, unicode.IsControl) >= 0:
		return "", fault.Invalid("%s holds a line break or control character; write it on one line", field)
	}
	return v, nil
}

func sameName(a, b string) bool { return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b)) }

// check validates and normalises the manifest. Messages name the field
// and say what to write instead. catalog, when not nil, is what app
// declarations must name (their names are taken from it).
func (m *Manifest) check(catalog *connector.Catalog) error {
	var err error
	if m.SchemaVersion == 0 {
		m.SchemaVersion = SchemaVersion
	}
	if m.SchemaVersion != SchemaVersion {
		return fault.Invalid("schema_version %d is not one this app reads; it reads version %d", m.SchemaVersion, SchemaVersion)
	}
	if m.Name, err = text("name", m.Name, MaxNameLen, true); err != nil {
		return err
	}
	if m.Name == "" {
		return fault.Invalid("name is empty; a template needs a name, e.g. \"Support inbox triage\"")
	}
	if m.Description, err = text("description", m.Description, MaxDescriptionLen, false); err != nil {
		return err
	}
	if m.Author, err = text("author", m.Author, MaxAuthorLen, true); err != nil {
		return err
	}
	if m.Category, err = text("category", m.Category, MaxCategoryLen, true); err != nil {
		return err
	}
	switch m.Price = strings.TrimSpace(m.Price); m.Price {
	case "":
		m.Price = PriceFree
	case PriceFree, PricePaid:
	default:
		return fault.Invalid("price %q is not a price label; use \"free\" or \"paid\"", m.Price)
	}
	if m.Model.Provider, err = text("model.provider", m.Model.Provider, agent.MaxModelLen, true); err != nil {
		return err
	}
	if m.Model.Model, err = text("model.model", m.Model.Model, agent.MaxModelLen, true); err != nil {
		return err
	}
	if m.Budget != nil {
		if err := m.Budget.Check(); err != nil {
			return fault.Invalid("budget: %v", err)
		}
		if !m.Budget.Any() {
			m.Budget = nil
		}
	}
	if m.Capabilities, err = checkCapabilities(m.Capabilities); err != nil {
		return err
	}
	if m.AskFirst, err = checkAskFirst(m.AskFirst); err != nil {
		return err
	}
	if err := m.checkSchedules(); err != nil {
		return err
	}
	if err := m.checkTriggers(); err != nil {
		return err
	}
	if err := m.checkConnectors(catalog); err != nil {
		return err
	}
	if err := m.checkVariables(); err != nil {
		return err
	}
	m.normalize()
	return nil
}

func checkCapabilities(ids []string) ([]string, error) {
	known := make([]string, len(agent.Capabilities))
	for i, c := range agent.Capabilities {
		known[i] = c.ID
	}
	out := []string{}
	for _, id := range ids {
		if !slices.Contains(known, id) {
			return nil, fault.Invalid("capabilities: %q is not a capability; use some of %s", id, strings.Join(known, ", "))
		}
	}
	for _, k := range known { // catalog order, once each
		if slices.Contains(ids, k) {
			out = append(out, k)
		}
	}
	return out, nil
}

// checkAskFirst completes a policy with the defaults for the families it
// does not name.
func checkAskFirst(p map[string]bool) (map[string]bool, error) {
	out := map[string]bool(agent.DefaultAskFirst())
	for k, v := range p {
		if !slices.Contains(agent.AskFirstFamilies, k) {
			return nil, fault.Invalid("ask_first: %q has no ask-first switch; the families with one are %s", k, strings.Join(agent.AskFirstFamilies, ", "))
		}
		out[k] = v
	}
	return out, nil
}

// automation is a kind of automation a template holds, for its checks and
// their messages.
type automation struct {
	list, what, example, does string
	maxName, maxInstruction   int
}

var (
	scheduleItem = automation{"schedules", "schedule", "Morning digest", "what the agent does each time", schedule.MaxNameLen, schedule.MaxInstructionLen}
	triggerItem  = automation{"triggers", "trigger", "New order", "what the agent does with each call", trigger.MaxNameLen, trigger.MaxInstructionLen}
)

// check trims and checks the name and instruction of item i of its list;
// earlier are the names of the items before it. field names the item in
// the messages that follow.
func (a automation) check(i int, name, instruction *string, earlier []string) (field string, err error) {
	if *name, err = text(fmt.Sprintf("%s[%d].name", a.list, i), *name, a.maxName, true); err != nil {
		return "", err
	}
	if *name == "" {
		return "", fault.Invalid("%s[%d].name is empty; name it, e.g. %q", a.list, i, a.example)
	}
	field = fmt.Sprintf("%s %q", a.what, *name)
	for _, other := range earlier {
		if sameName(other, *name) {
			return "", fault.Invalid("%s appears twice; give each %s its own name", field, a.what)
		}
	}
	if *instruction = strings.TrimSpace(*instruction); *instruction == "" {
		return "", fault.Invalid("%s: instruction is empty; say %s", field, a.does)
	}
	if len(*instruction) > a.maxInstruction {
		return "", fault.Invalid("%s: instruction is longer than %d KiB; put long material in a file", field, a.maxInstruction>>10)
	}
	return field, nil
}

func (m *Manifest) checkSchedules() error {
	if len(m.Schedules) > MaxSchedules {
		return fault.Invalid("schedules: %d scheduled tasks; a template holds at most %d", len(m.Schedules), MaxSchedules)
	}
	var names []string
	for i := range m.Schedules {
		sch := &m.Schedules[i]
		field, err := scheduleItem.check(i, &sch.Name, &sch.Instruction, names)
		if err != nil {
			return err
		}
		names = append(names, sch.Name)
		if sch.Kind == "" {
			sch.Kind = schedule.KindCron
			if sch.At != nil {
				sch.Kind = schedule.KindOnce
			}
		}
		sch.Cron, sch.Timezone = strings.TrimSpace(sch.Cron), strings.TrimSpace(sch.Timezone)
		spec := schedule.Spec{Kind: sch.Kind, Cron: sch.Cron, Timezone: sch.Timezone, At: sch.At}
		if spec.Timezone == "" {
			spec.Timezone = "UTC" // the installer's zone, whatever it is
		}
		if err := schedule.Validate(spec); err != nil {
			return fault.Invalid("%s: %s", field, fault.Message(err))
		}
		switch sch.Kind {
		case schedule.KindCron:
			sch.At = nil
		case schedule.KindOnce:
			sch.Cron = ""
			at := sch.At.UTC().Truncate(time.Second)
			sch.At = &at
		}
		switch sch.CatchUp {
		case "", schedule.CatchUpOnce, schedule.CatchUpSkip:
		default:
			return fault.Invalid("%s: catch_up %q is unknown; use \"once\" or \"skip\"", field, sch.CatchUp)
		}
	}
	return nil
}

var knownMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

func (m *Manifest) checkTriggers() error {
	if len(m.Triggers) > MaxTriggers {
		return fault.Invalid("triggers: %d webhook triggers; a template holds at most %d", len(m.Triggers), MaxTriggers)
	}
	var names []string
	for i := range m.Triggers {
		t := &m.Triggers[i]
		field, err := triggerItem.check(i, &t.Name, &t.Instruction, names)
		if err != nil {
			return err
		}
		names = append(names, t.Name)
		var methods []string
		for _, x := range t.Methods {
			x = strings.ToUpper(strings.TrimSpace(x))
			if !slices.Contains(knownMethods, x) {
				return fault.Invalid("%s: method %q is not one of %s", field, x, strings.Join(knownMethods, ", "))
			}
			if !slices.Contains(methods, x) {
				methods = append(methods, x)
			}
		}
		if len(methods) == 0 {
			methods = []string{"POST"}
		}
		t.Methods = methods
	}
	return nil
}

func (m *Manifest) checkConnectors(catalog *connector.Catalog) error {
	if len(m.Connectors) > MaxConnectors {
		return fault.Invalid("connectors: %d apps; a template declares at most %d", len(m.Connectors), MaxConnectors)
	}
	var out []Connector
	for i, c := range m.Connectors {
		id := strings.TrimSpace(c.CatalogID)
		if id == "" {
			return fault.Invalid("connectors[%d].catalog_id is empty; name a catalog app by its id (search_connectors shows them)", i)
		}
		if catalog != nil {
			app, ok := catalog.Find(id)
			if !ok {
				return fault.Invalid("connectors[%d]: no app %q in the catalog; use a catalog id (search_connectors shows them)", i, id)
			}
			c = Connector{CatalogID: app.ID, Name: app.Name}
		} else if !catalogIDRE.MatchString(id) {
			return fault.Invalid("connectors[%d].catalog_id %q is not a catalog id (lowercase letters, digits and hyphens)", i, id)
		}
		c.CatalogID = strings.TrimSpace(c.CatalogID)
		if c.Name, _ = text("name", c.Name, MaxNameLen, true); c.Name == "" {
			c.Name = c.CatalogID
		}
		if !slices.ContainsFunc(out, func(x Connector) bool { return x.CatalogID == c.CatalogID }) {
			out = append(out, c)
		}
	}
	m.Connectors = out
	return nil
}

func (m *Manifest) checkVariables() error {
	if len(m.Variables) > MaxVariables {
		return fault.Invalid("variables: %d names; a template needs at most %d", len(m.Variables), MaxVariables)
	}
	var out []Variable
	for i, v := range m.Variables {
		v.Name = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(v.Name), "${"), "}")
		if !variableNameRE.MatchString(v.Name) {
			return fault.Invalid("variables[%d].name %q must be uppercase letters, digits and _, starting with a letter (e.g. STRIPE_API_KEY)", i, v.Name)
		}
		var err error
		if v.Help, err = text(fmt.Sprintf("variables[%d].help", i), v.Help, MaxHelpLen, false); err != nil {
			return err
		}
		if v.URL, err = text(fmt.Sprintf("variables[%d].url", i), v.URL, MaxHelpLen, true); err != nil {
			return err
		}
		if v.URL != "" && (!strings.HasPrefix(v.URL, "https://") && !strings.HasPrefix(v.URL, "http://") || strings.ContainsAny(v.URL, " \t")) {
			return fault.Invalid("variables[%d].url %q must be a web address starting with https:// (where the person gets the value)", i, v.URL)
		}
		if j := slices.IndexFunc(out, func(x Variable) bool { return x.Name == v.Name }); j >= 0 {
			return fault.Invalid("variables: %s appears twice; list each name once", v.Name)
		}
		out = append(out, v)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	m.Variables = out
	return nil
}

//go:embed schema/template.schema.json
var schemaJSON []byte

const schemaURL = "https://rerun.build/schemas/template.schema.json"

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
})

var printer = message.NewPrinter(language.English)

// validateSchema checks a decoded template.json against the schema. The
// error names each place that is wrong and why.
func validateSchema(doc any) error {
	sch, err := compiled()
	if err != nil {
		return fmt.Errorf("load the template schema: %w", err)
	}
	err = sch.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fault.Invalid("template.json does not follow the template schema: %v", err)
	}
	var lines []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			at := "/" + strings.Join(e.InstanceLocation, "/")
			lines = append(lines, fmt.Sprintf("at %s: %s", at, e.ErrorKind.LocalizedString(printer)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.Sort(lines)
	lines = slices.Compact(lines)
	if len(lines) > 5 {
		lines = append(lines[:5], fmt.Sprintf("and %d more", len(lines)-5))
	}
	return fault.Invalid("template.json does not follow the template schema (schema/template.schema.json): %s", strings.Join(lines, "; "))
}

// manifestJSON is the manifest as template.json holds it.
func (m Manifest) manifestJSON() ([]byte, error) {
	m.normalize()
	return json.MarshalIndent(m, "", "  ")
}
