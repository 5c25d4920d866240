package template

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/skill"
)

// MaxAgentFilesBytes bounds what of an agent's own files folder a template
// saved from it carries; the files past it are left out (and named in the
// preview).
const MaxAgentFilesBytes = 5 << 20

// Preview says what saving an agent as a template puts in and leaves out,
// one line each, for the "Save as template" dialog.
type Preview struct {
	Included []string `json:"included"`
	LeftOut  []string `json:"left_out"`
}

// Preview returns what FromAgent would put in the template, and what not.
func (s *Service) Preview(ctx context.Context, agentID string) (Preview, error) {
	g, err := s.gather(ctx, agentID)
	if err != nil {
		return Preview{}, err
	}
	return g.preview, nil
}

// FromAgent saves an agent as a new template: its soul, model,
// capabilities, approval policy, skills, scheduled tasks and trigger
// definitions, the catalog apps installed on it, the names of the variables
// those apps, its skills and its text refer to, and its own files folder (up
// to MaxAgentFilesBytes). Never its memories, variable values, trigger
// tokens or run history: a variable's value written in its soul, a skill or
// a file becomes the ${NAME} reference, other credential-shaped text is
// removed, and a binary file holding either is left out. p changes the
// result (its name, description…) before it is stored.
func (s *Service) FromAgent(ctx context.Context, agentID string, p Patch) (Template, error) {
	g, err := s.gather(ctx, agentID)
	if err != nil {
		return Template{}, err
	}
	p.apply(&g.pkg.Manifest, &g.pkg.Soul)
	return s.insert(ctx, g.pkg, agentID)
}

// gathered is an agent as a template, with the preview of it.
type gathered struct {
	pkg     *Package
	preview Preview
	// refs are the variables referred to, with where (for their help).
	refs map[string]string
}

func (g *gathered) include(format string, args ...any) {
	g.preview.Included = append(g.preview.Included, fmt.Sprintf(format, args...))
}

func (g *gathered) leaveOut(format string, args ...any) {
	g.preview.LeftOut = append(g.preview.LeftOut, fmt.Sprintf(format, args...))
}

// redactedRE is how a variable's value reads once masked.
var redactedRE = regexp.MustCompile(`\[redacted:([A-Z][A-Z0-9_]{0,63})\]`)

// scrub rewrites text for a template: each variable's value (in any of the
// encodings the redactor knows) becomes its ${NAME} reference, and other
// credential-shaped text is removed. changed says whether anything was.
func (s *Service) scrub(text string) (out string, changed bool) {
	out = text
	if s.d.Variables != nil {
		out = redactedRE.ReplaceAllString(s.d.Variables.Redact(out), "$${$1}")
	}
	out, removed := secret.ScrubCredentials(out)
	return out, removed || out != text
}

// note records the variables text refers to.
func (g *gathered) note(text, where string) {
	for _, name := range references(text) {
		if _, ok := g.refs[name]; !ok {
			g.refs[name] = where
		}
	}
}

func (s *Service) gather(ctx context.Context, agentID string) (*gathered, error) {
	a, err := s.d.Agents.Get(ctx, agentID)
	if err != nil {
		return nil, err
	}
	m := blankManifest()
	m.Name = a.Name
	m.Model = Model{Provider: a.Provider, Model: a.Model}
	if s.d.Budgets != nil { // the agent's budget becomes the template's suggestion
		if l, err := s.d.Budgets.Agent(ctx, agentID); err == nil && l.Any() {
			m.Budget = &l
		}
	}
	m.Capabilities = slices.Clone(a.Capabilities)
	m.AskFirst = map[string]bool(a.AskFirst)
	g := &gathered{pkg: &Package{Manifest: m, Skills: map[string]map[string][]byte{}, Files: map[string][]byte{}},
		preview: Preview{Included: []string{}, LeftOut: []string{}}, refs: map[string]string{}}
	scrubbed := false
	soul, changed := s.scrub(a.Soul)
	scrubbed = scrubbed || changed
	g.pkg.Soul = soul
	g.note(soul, "its soul")
	g.include("Soul (%s)", soulLength(soul))
	if a.Model != "" {
		g.include("Model suggestion: %s", strings.TrimPrefix(a.Provider+" / "+a.Model, " / "))
	}
	g.include("Capabilities: %s", orNone(a.Capabilities))
	var asks []string
	for _, f := range sortedNames(a.AskFirst) {
		if a.AskFirst[f] {
			asks = append(asks, f)
		}
	}
	g.include("Approval policy (ask first): %s", orNone(asks))

	budget := MaxUnpackedBytes - len(soul) - MaxManifestBytes
	files := 2
	skills, err := s.d.Skills.List(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	for _, sum := range skills {
		if sum.Error != "" {
			g.leaveOut("Skill %s: its SKILL.md does not parse (%s)", sum.Name, sum.Error)
			continue
		}
		folder, dirty, skipped, err := s.skillFolder(ctx, a.ID, sum.Name)
		if err != nil {
			return nil, err
		}
		for _, msg := range skipped {
			g.leaveOut("%s", msg)
		}
		n := 0
		for _, data := range folder {
			n += len(data)
		}
		if n > budget || files+len(folder) > MaxFiles {
			g.leaveOut("Skill %s (%s): more than a template holds", sum.Name, size(n))
			continue
		}
		budget, files = budget-n, files+len(folder)
		scrubbed = scrubbed || dirty
		g.pkg.Skills[sum.Name] = folder
		for _, data := range folder {
			g.note(string(data), "the skill "+sum.Name)
		}
		if extra := len(folder) - 1; extra > 0 {
			g.include("Skill %s (+%d file%s)", sum.Name, extra, plural(extra))
		} else {
			g.include("Skill %s", sum.Name)
		}
	}

	schedules, err := s.d.Schedules.List(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	for _, sch := range schedules {
		instr, changed := s.scrub(sch.Instruction)
		scrubbed = scrubbed || changed
		g.note(instr, "the scheduled task "+sch.Name)
		g.pkg.Schedules = append(g.pkg.Schedules, Schedule{Name: sch.Name, Instruction: instr, Kind: sch.Kind, Cron: sch.Cron,
			Timezone: sch.Timezone, At: sch.At, CatchUp: sch.CatchUp})
		g.include("Scheduled task “%s”, %s (installed paused)", sch.Name, lowerFirst(sch.Description))
	}
	triggers, err := s.d.Triggers.List(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	for _, t := range triggers {
		instr, changed := s.scrub(t.Instruction)
		scrubbed = scrubbed || changed
		g.note(instr, "the webhook trigger "+t.Name)
		g.pkg.Triggers = append(g.pkg.Triggers, Trigger{Name: t.Name, Instruction: instr, Methods: slices.Clone(t.Methods)})
		g.include("Webhook trigger “%s” (its definition; installing makes a new URL)", t.Name)
		if t.SigningSecretVar != "" {
			g.leaveOut("The signature check of webhook trigger “%s” (set it again after installing)", t.Name)
		}
	}

	if s.d.Connectors != nil {
		apps, err := s.d.Connectors.List(ctx, a.ID)
		if err != nil {
			return nil, err
		}
		cat := s.d.Connectors.Catalog()
		for _, c := range apps {
			app, ok := cat.Get(c.CatalogID)
			if c.CatalogID == "" || !ok {
				g.leaveOut("Custom MCP server %s (only apps of the catalog are declared)", c.Name)
				continue
			}
			g.pkg.Connectors = append(g.pkg.Connectors, Connector{CatalogID: app.ID, Name: app.Name})
			g.include("App %s (declared; the person signs in after installing)", app.Name)
			for _, v := range app.Variables {
				help := strings.TrimSpace(v.Label + ". " + v.Help)
				if v.Label == "" {
					help = v.Help
				}
				g.addVariable(Variable{Name: v.Name, Help: help, URL: v.URL})
			}
		}
	}

	if err := s.agentFiles(a.ID, g, &budget, &files, &scrubbed); err != nil {
		return nil, err
	}

	for _, name := range sortedNames(g.refs) {
		g.addVariable(Variable{Name: name, Help: "Referred to in " + g.refs[name] + "."})
	}
	var names []string
	for _, v := range g.pkg.Variables {
		names = append(names, v.Name)
	}
	if len(names) > 0 {
		g.include("Variable names: %s (never their values; installing asks for them)", strings.Join(names, ", "))
	}
	g.leaveOut("Memories")
	g.leaveOut("Values of variables, API keys and sign-ins")
	g.leaveOut("Webhook URLs and their tokens")
	g.leaveOut("Run history, chats and sessions")
	g.leaveOut("Its own database (agent.db) and browser profile")
	if scrubbed {
		g.leaveOut("Credentials written out in its soul, skills, instructions or files: a variable's value became its ${NAME} reference, anything else that looked like a key was removed")
	}
	return g, nil
}

// addVariable declares a variable once; the first help given wins.
func (g *gathered) addVariable(v Variable) {
	if !variableNameRE.MatchString(v.Name) || len(g.pkg.Variables) >= MaxVariables {
		return
	}
	for _, x := range g.pkg.Variables {
		if x.Name == v.Name {
			return
		}
	}
	if utf8.RuneCountInString(v.Help) > MaxHelpLen {
		v.Help = string([]rune(v.Help)[:MaxHelpLen])
	}
	if !strings.HasPrefix(v.URL, "https://") && !strings.HasPrefix(v.URL, "http://") {
		v.URL = ""
	}
	g.pkg.Variables = append(g.pkg.Variables, v)
}

// skillFolder reads one of the agent's skills, scrubbed. A binary file
// that holds a credential is left out (skipped says so).
func (s *Service) skillFolder(ctx context.Context, agentID, name string) (folder map[string][]byte, dirty bool, skipped []string, err error) {
	loaded, err := s.d.Skills.Load(ctx, agentID, name)
	if err != nil {
		return nil, false, nil, err
	}
	folder = map[string][]byte{}
	for _, rel := range append([]string{skill.FileName}, loaded.Files...) {
		data, err := s.d.Skills.ReadFile(ctx, agentID, name, rel)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("skills/%s/%s: %v", name, rel, err))
			continue
		}
		if _, err := cleanPath(rel); err != nil {
			skipped = append(skipped, fmt.Sprintf("skills/%s/%s: its name cannot travel in a package", name, rel))
			continue
		}
		clean, ok, changed := s.scrubFile(data)
		if !ok {
			skipped = append(skipped, fmt.Sprintf("skills/%s/%s: a binary file holding a credential", name, rel))
			continue
		}
		dirty = dirty || changed
		folder[rel] = clean
	}
	return folder, dirty, skipped, nil
}

// scrubFile scrubs a text file; a binary one is kept as it is only when it
// holds no credential (ok false: leave it out).
func (s *Service) scrubFile(data []byte) (out []byte, ok, changed bool) {
	if utf8.Valid(data) {
		text, changed := s.scrub(string(data))
		return []byte(text), true, changed
	}
	if _, changed := s.scrub(string(data)); changed {
		return nil, false, false
	}
	return data, true, false
}

// agentFiles copies the agent's own files folder, within the budget.
func (s *Service) agentFiles(agentID string, g *gathered, budget, files *int, scrubbed *bool) error {
	dir := filepath.Join(s.d.Agents.Dir(agentID), "files")
	type entry struct {
		rel  string
		data []byte
	}
	var all []entry
	if err := walkFiles(dir, func(rel string, data []byte) { all = append(all, entry{rel, data}) }); err != nil {
		return fmt.Errorf("read the agent's files: %w", err)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].rel < all[j].rel })
	allowed := min(MaxAgentFilesBytes, *budget)
	took, n := 0, 0
	var over []string
	for _, e := range all {
		if _, err := cleanPath(e.rel); err != nil {
			g.leaveOut("files/%s: its name cannot travel in a package", e.rel)
			continue
		}
		data, ok, changed := s.scrubFile(e.data)
		if !ok {
			g.leaveOut("files/%s: a binary file holding a credential", e.rel)
			continue
		}
		if took+len(data) > allowed || *files+1 > MaxFiles {
			over = append(over, e.rel)
			continue
		}
		*scrubbed = *scrubbed || changed
		took, n, *files = took+len(data), n+1, *files+1
		g.pkg.Files[e.rel] = data
		if utf8.Valid(data) {
			g.note(string(data), "files/"+e.rel)
		}
	}
	*budget -= took
	if n > 0 {
		g.include("Files: %d (%s)", n, size(took))
	}
	if len(over) > 0 {
		shown := over
		if len(shown) > 5 {
			shown = append(slices.Clone(shown[:5]), fmt.Sprintf("and %d more", len(over)-5))
		}
		g.leaveOut("Files over the %d MiB a template carries: %s", MaxAgentFilesBytes>>20, strings.Join(shown, ", "))
	}
	return nil
}

// soulLength says how long a soul is in words a person counts ("about 120
// words"), not bytes.
func soulLength(soul string) string {
	n := 0
	for _, f := range strings.Fields(soul) {
		if strings.IndexFunc(f, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			n++ // "#" and "-" are markdown, not words
		}
	}
	switch {
	case n == 0:
		return "empty"
	case n == 1:
		return "1 word"
	case n < 100:
		return fmt.Sprintf("%d words", n)
	}
	return fmt.Sprintf("about %d words", (n+50)/100*100)
}

func size(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", mib(n))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return strings.ToLower(string(r)) + s[n:]
}
