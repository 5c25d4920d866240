// Package template owns templates: packaged agent setups — soul, model
// suggestion, capabilities, approval policy, skills, scheduled tasks,
// webhook trigger definitions, app declarations, the names of the variables
// the agent needs, and files — kept in the workspace's template library and
// exchanged as one .rerun-template file (a zip: template.json, soul.md,
// skills/<name>/…, files/…; template.json follows
// schema/template.schema.json).
//
// A template never holds memories, variable values, trigger tokens, API
// keys or run history. Saving an agent as a template copies none of them
// and writes a variable's value found in its text as the ${NAME} reference;
// every write refuses text that looks like a credential; Import refuses a
// package that carries any of them, or breaks the format's limits, whole:
// nothing of a refused package is kept.
//
// Install makes an agent from a template (its handle made unique), with its
// skills and files, its scheduled tasks and triggers paused, its apps
// declared, and cards asking the person to finish each app's sign-in and to
// fill each variable it needs that is not set yet (Deps.Cards raises them
// without a model turn). If any part fails, the agent is removed again.
//
// The library is a table (templates: the manifest as JSON) and a folder per
// template, <workspace>/templates/<id>/ with soul.md, skills/ and files/.
// Changes publish event.Change kinds template.created, template.updated and
// template.deleted (ID: the template).
package template

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/box"
	"github.com/rerun-build/rerun-desktop/backend/budget"
	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/schedule"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/skill"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/trigger"
)

// Statuses of a template. Any change to a submitted template makes it a
// draft again.
const (
	StatusDraft     = "draft"
	StatusSubmitted = "submitted"
)

// Template is one template of the library.
type Template struct {
	ID string `json:"id"`
	Manifest
	Soul   string   `json:"soul"`
	Skills []Skill  `json:"skills"`
	Files  []string `json:"files"` // paths under files/, sorted
	Status string   `json:"status"`
	// SourceAgentID is the agent it was saved from, "" for a blank or
	// imported one.
	SourceAgentID string    `json:"-"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// Skill is one skill of a template: an Agent Skills folder.
type Skill struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Files       []string `json:"files"` // reference files beside SKILL.md, sorted
}

// Patch changes the fields of a template's manifest and its soul that are
// not nil. AskFirst changes the named families' switches only.
type Patch struct {
	Name         *string         `json:"name"`
	Description  *string         `json:"description"`
	Author       *string         `json:"author"`
	Category     *string         `json:"category"`
	Price        *string         `json:"price"`
	Model        *Model          `json:"model"`
	Capabilities *[]string       `json:"capabilities"`
	AskFirst     map[string]bool `json:"ask_first"`
	Soul         *string         `json:"soul"`
	Triggers     *[]Trigger      `json:"triggers"`
	Connectors   *[]Connector    `json:"connectors"`
	Variables    *[]Variable     `json:"variables"`
}

func (p Patch) apply(m *Manifest, soul *string) {
	set(&m.Name, p.Name)
	set(&m.Description, p.Description)
	set(&m.Author, p.Author)
	set(&m.Category, p.Category)
	set(&m.Price, p.Price)
	set(&m.Model, p.Model)
	set(&m.Capabilities, p.Capabilities)
	set(&m.Triggers, p.Triggers)
	set(&m.Connectors, p.Connectors)
	set(&m.Variables, p.Variables)
	set(soul, p.Soul)
	if p.AskFirst != nil {
		if m.AskFirst == nil {
			m.AskFirst = map[string]bool{}
		}
		for k, v := range p.AskFirst {
			m.AskFirst[k] = v
		}
	}
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// Deps is what the service is wired with: the workspace's services an
// agent is read from and installed through.
type Deps struct {
	DB *store.DB
	// Dir is the workspace's templates/ folder.
	Dir        string
	Workspace  string
	Bus        *event.Bus   // nil: no change events
	Logger     *slog.Logger // nil: discard
	Agents     *agent.Service
	Boxes      *box.Service
	Skills     *skill.Service
	Schedules  *schedule.Service
	Triggers   *trigger.Service
	Connectors *connector.Service
	Variables  *secret.Variables
	// Budgets receive the budget an install accepts (nil: none is set).
	Budgets *budget.Service
	// Cards raise the cards an install asks; Notify tells the person what
	// was installed paused.
	Cards  Cards
	Notify *notify.Service
	Now    func() time.Time // default time.Now
}

// Cards raises a card on an agent without a model turn: kind is a pause kind
// and request its request value (pause.CredentialRequest for a credential
// card, …), checked as an agent's would be. run.Service does it (Ask); the
// composition root adapts it, so that a template never depends on the run
// engine.
type Cards interface {
	Ask(ctx context.Context, agentID, kind string, request any) error
}

// Service keeps the template library of one workspace.
type Service struct {
	d   Deps
	log *slog.Logger
	// mu serialises changes, and keeps readers from seeing a template
	// half changed: it is a row and a folder, changed together.
	mu sync.RWMutex
}

// New returns the template service.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	log := d.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Service{d: d, log: log}
}

func (s *Service) now() time.Time { return s.d.Now().UTC() }

func (s *Service) publish(kind, id string) {
	if s.d.Bus != nil {
		s.d.Bus.Publish(event.Change{Workspace: s.d.Workspace, Kind: kind, ID: id})
	}
}

// dir is a template's folder.
func (s *Service) dir(id string) string { return filepath.Join(s.d.Dir, id) }

// catalog is the app catalog declarations are checked against (nil: none).
func (s *Service) catalog() *connector.Catalog {
	if s.d.Connectors == nil {
		return nil
	}
	return s.d.Connectors.Catalog()
}

type row struct {
	id, manifest, status, source, created, updated string
}

func scanRow(sc store.Scanner) (row, error) {
	var r row
	err := sc.Scan(&r.id, &r.manifest, &r.status, &r.source, &r.created, &r.updated)
	return r, err
}

const rowColumns = `id, manifest, status, source_agent_id, created_at, updated_at`

func (s *Service) row(ctx context.Context, id string) (row, error) {
	r, err := scanRow(s.d.DB.QueryRowContext(ctx, `SELECT `+rowColumns+` FROM templates WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return row{}, fault.NotFound("no template with id %q", id)
	}
	if err != nil {
		return row{}, fmt.Errorf("get template %q: %w", id, err)
	}
	return r, nil
}

// view reads a row's template with its folder.
func (s *Service) view(r row) (Template, error) {
	t := Template{ID: r.id, Status: r.status, SourceAgentID: r.source,
		CreatedAt: store.ParseTime(r.created), UpdatedAt: store.ParseTime(r.updated)}
	if err := json.Unmarshal([]byte(r.manifest), &t.Manifest); err != nil {
		return Template{}, fmt.Errorf("template %s manifest: %w", r.id, err)
	}
	t.Manifest.normalize()
	c, err := readFolder(s.dir(r.id))
	if err != nil {
		return Template{}, fmt.Errorf("read template %s: %w", r.id, err)
	}
	t.Soul = c.Soul
	t.Skills, t.Files = c.skillList(), c.fileList()
	return t, nil
}

// List returns the library, most recently changed first.
func (s *Service) List(ctx context.Context) ([]Template, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	rows, err := store.Query(ctx, s.d.DB, scanRow, `SELECT `+rowColumns+` FROM templates ORDER BY updated_at DESC, id`)
	if err != nil {
		return nil, fmt.Errorf("list templates: %w", err)
	}
	out := make([]Template, 0, len(rows))
	for _, r := range rows {
		t, err := s.view(r)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// Get returns one template.
func (s *Service) Get(ctx context.Context, id string) (Template, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, err := s.row(ctx, id)
	if err != nil {
		return Template{}, err
	}
	return s.view(r)
}

// Create adds a blank template: the defaults of a new agent (its
// capabilities and approval policy), changed by p. It needs a name.
func (s *Service) Create(ctx context.Context, p Patch) (Template, error) {
	c := &Package{Manifest: blankManifest()}
	p.apply(&c.Manifest, &c.Soul)
	return s.insert(ctx, c, "")
}

// blankManifest is what a new template starts with.
func blankManifest() Manifest {
	return Manifest{SchemaVersion: SchemaVersion, Price: PriceFree, Capabilities: agent.DefaultCapabilities(),
		AskFirst: agent.DefaultAskFirst()}
}

// insert checks c and stores it as a new template: its folder is built
// aside and moved into place in the row's transaction, so a failure leaves
// neither.
func (s *Service) insert(ctx context.Context, c *Package, sourceAgent string) (Template, error) {
	if err := c.check(s.catalog()); err != nil {
		return Template{}, err
	}
	manifest, err := json.Marshal(c.Manifest)
	if err != nil {
		return Template{}, fmt.Errorf("encode template manifest: %w", err)
	}
	id := store.NewID("tpl")
	if err := s.store(ctx, id, c, string(manifest), sourceAgent); err != nil {
		return Template{}, fmt.Errorf("store template %q: %w", c.Name, err)
	}
	s.publish("template.created", id)
	return s.Get(ctx, id)
}

func (s *Service) store(ctx context.Context, id string, c *Package, manifest, sourceAgent string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(s.d.Dir, 0o700); err != nil {
		return err
	}
	stage, err := os.MkdirTemp(s.d.Dir, ".new-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage) // gone once renamed; left only by a failure
	if err := c.writeFolder(stage); err != nil {
		return err
	}
	now := store.FormatTime(s.now())
	err = s.d.DB.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO templates (name, `+rowColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			c.Name, id, manifest, StatusDraft, sourceAgent, now, now); err != nil {
			return err
		}
		// Last before the commit: a failed rename rolls the row back.
		return os.Rename(stage, s.dir(id))
	})
	if err != nil {
		os.RemoveAll(s.dir(id))
	}
	return err
}

// Update changes a template's manifest fields and soul.
func (s *Service) Update(ctx context.Context, id string, p Patch) (Template, error) {
	return s.change(ctx, id, func(c *Package) error {
		p.apply(&c.Manifest, &c.Soul)
		return nil
	})
}

// change applies edit to a template's content, checks the result and
// stores it (row and folder) as a draft.
func (s *Service) change(ctx context.Context, id string, edit func(c *Package) error) (Template, error) {
	s.mu.Lock()
	err := s.changeLocked(ctx, id, edit)
	s.mu.Unlock()
	if err != nil {
		return Template{}, err
	}
	s.publish("template.updated", id)
	return s.Get(ctx, id)
}

func (s *Service) changeLocked(ctx context.Context, id string, edit func(c *Package) error) error {
	c, _, err := s.content(ctx, id)
	if err != nil {
		return err
	}
	if err := edit(c); err != nil {
		return err
	}
	if err := c.check(s.catalog()); err != nil {
		return err
	}
	manifest, err := json.Marshal(c.Manifest)
	if err != nil {
		return fmt.Errorf("encode template manifest: %w", err)
	}
	// The new folder is built beside the old one and swapped in inside the
	// transaction: a failure keeps the old template whole.
	stage, err := os.MkdirTemp(s.d.Dir, ".edit-")
	if err != nil {
		return fmt.Errorf("update template %s: %w", id, err)
	}
	defer os.RemoveAll(stage)
	if err := c.writeFolder(stage); err != nil {
		return fmt.Errorf("update template %s: %w", id, err)
	}
	old := stage + ".old"
	err = s.d.DB.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE templates SET name = ?, manifest = ?, status = ?, updated_at = ? WHERE id = ?`,
			c.Name, string(manifest), StatusDraft, store.FormatTime(s.now()), id); err != nil {
			return err
		}
		if err := os.Rename(s.dir(id), old); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := os.Rename(stage, s.dir(id)); err != nil {
			os.Rename(old, s.dir(id))
			return err
		}
		return nil
	})
	if err != nil {
		if _, statErr := os.Stat(old); statErr == nil {
			os.RemoveAll(s.dir(id))
			os.Rename(old, s.dir(id))
		}
		return fmt.Errorf("update template %s: %w", id, err)
	}
	os.RemoveAll(old)
	return nil
}

// read is content for readers: not while a change is under way.
func (s *Service) read(ctx context.Context, id string) (*Package, row, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.content(ctx, id)
}

// content reads a template's row and whole content; s.mu is held.
func (s *Service) content(ctx context.Context, id string) (*Package, row, error) {
	r, err := s.row(ctx, id)
	if err != nil {
		return nil, row{}, err
	}
	c, err := s.load(r)
	return c, r, err
}

// load reads a template's whole content: manifest, soul, skills, files.
func (s *Service) load(r row) (*Package, error) {
	c, err := readFolder(s.dir(r.id))
	if err != nil {
		return nil, fmt.Errorf("read template %s: %w", r.id, err)
	}
	if err := json.Unmarshal([]byte(r.manifest), &c.Manifest); err != nil {
		return nil, fmt.Errorf("template %s manifest: %w", r.id, err)
	}
	c.Manifest.normalize()
	return c, nil
}

// Delete removes a template and its folder.
func (s *Service) Delete(ctx context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	res, err := s.d.DB.ExecContext(ctx, `DELETE FROM templates WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete template %q: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fault.NotFound("no template with id %q", id)
	}
	// The row goes first: a folder left by a failed removal is harmless.
	if err := os.RemoveAll(s.dir(id)); err != nil {
		return fmt.Errorf("delete template %q folder: %w", id, err)
	}
	s.publish("template.deleted", id)
	return nil
}

// UpsertSkill adds or replaces a skill of a template. skillMD is the whole
// SKILL.md (its front matter names the skill); files are its reference
// files (path → content; nil content deletes that file). Files not named
// are kept when the skill exists.
func (s *Service) UpsertSkill(ctx context.Context, id, skillMD string, files map[string][]byte) (Skill, error) {
	sk, err := skill.Parse([]byte(skillMD))
	if err != nil {
		return Skill{}, fault.Invalid("skill_md: %s", fault.Message(err))
	}
	t, err := s.change(ctx, id, func(c *Package) error {
		folder := c.Skills[sk.Name]
		if folder == nil {
			folder = map[string][]byte{}
		}
		for p, data := range files {
			rel, err := cleanPath(p)
			if err != nil {
				return fault.Invalid("files: %s", fault.Message(err))
			}
			if rel == skill.FileName {
				return fault.Invalid("files: pass SKILL.md as skill_md, not as a reference file")
			}
			if data == nil {
				delete(folder, rel)
			} else {
				folder[rel] = data
			}
		}
		folder[skill.FileName] = []byte(skillMD)
		if c.Skills == nil {
			c.Skills = map[string]map[string][]byte{}
		}
		c.Skills[sk.Name] = folder
		return nil
	})
	if err != nil {
		return Skill{}, err
	}
	for _, x := range t.Skills {
		if x.Name == sk.Name {
			return x, nil
		}
	}
	return Skill{}, fmt.Errorf("skill %s missing after upsert", sk.Name)
}

// DeleteSkill removes a skill from a template.
func (s *Service) DeleteSkill(ctx context.Context, id, name string) error {
	_, err := s.change(ctx, id, func(c *Package) error {
		if _, ok := c.Skills[name]; !ok {
			return fault.NotFound("the template has no skill %q", name)
		}
		delete(c.Skills, name)
		return nil
	})
	return err
}

// SkillFile returns one file of a template's skill (SKILL.md included).
func (s *Service) SkillFile(ctx context.Context, id, name, file string) ([]byte, error) {
	c, _, err := s.read(ctx, id)
	if err != nil {
		return nil, err
	}
	folder, ok := c.Skills[name]
	if !ok {
		return nil, fault.NotFound("the template has no skill %q", name)
	}
	rel, err := cleanPath(file)
	if err != nil {
		return nil, err
	}
	data, ok := folder[rel]
	if !ok {
		return nil, fault.NotFound("skill %q of the template has no file %q", name, rel)
	}
	return data, nil
}

// UpsertSchedule adds a scheduled task to a template, or replaces the one
// with the same name.
func (s *Service) UpsertSchedule(ctx context.Context, id string, sch Schedule) (Schedule, error) {
	var out Schedule
	_, err := s.change(ctx, id, func(c *Package) error {
		for i, x := range c.Schedules {
			if sameName(x.Name, sch.Name) {
				c.Schedules[i] = sch
				return nil
			}
		}
		c.Schedules = append(c.Schedules, sch)
		return nil
	})
	if err != nil {
		return Schedule{}, err
	}
	t, err := s.Get(ctx, id)
	if err != nil {
		return Schedule{}, err
	}
	for _, x := range t.Schedules {
		if sameName(x.Name, sch.Name) {
			out = x
		}
	}
	return out, nil
}

// DeleteSchedule removes a template's scheduled task by name.
func (s *Service) DeleteSchedule(ctx context.Context, id, name string) error {
	_, err := s.change(ctx, id, func(c *Package) error {
		for i, x := range c.Schedules {
			if sameName(x.Name, name) {
				c.Schedules = append(c.Schedules[:i], c.Schedules[i+1:]...)
				return nil
			}
		}
		return fault.NotFound("the template has no scheduled task named %q", name)
	})
	return err
}

// UpsertFile writes a file under the template's files/.
func (s *Service) UpsertFile(ctx context.Context, id, path string, data []byte) error {
	rel, err := cleanPath(path)
	if err != nil {
		return err
	}
	if data == nil {
		data = []byte{}
	}
	_, err = s.change(ctx, id, func(c *Package) error {
		if c.Files == nil {
			c.Files = map[string][]byte{}
		}
		c.Files[rel] = data
		return nil
	})
	return err
}

// DeleteFile removes a file from the template's files/.
func (s *Service) DeleteFile(ctx context.Context, id, path string) error {
	rel, err := cleanPath(path)
	if err != nil {
		return err
	}
	_, err = s.change(ctx, id, func(c *Package) error {
		if _, ok := c.Files[rel]; !ok {
			return fault.NotFound("the template has no file %q; its files are listed by get_template", rel)
		}
		delete(c.Files, rel)
		return nil
	})
	return err
}

// File returns one file of the template's files/.
func (s *Service) File(ctx context.Context, id, path string) ([]byte, error) {
	rel, err := cleanPath(path)
	if err != nil {
		return nil, err
	}
	c, _, err := s.read(ctx, id)
	if err != nil {
		return nil, err
	}
	data, ok := c.Files[rel]
	if !ok {
		return nil, fault.NotFound("the template has no file %q", rel)
	}
	return data, nil
}

// Submit checks the template as an import would and marks it submitted:
// ready for someone to publish. Publishing is not done here; the app's
// export produces the package to share.
func (s *Service) Submit(ctx context.Context, id string) (Template, error) {
	s.mu.Lock()
	err := func() error {
		c, r, err := s.content(ctx, id)
		if err != nil {
			return err
		}
		if err := c.check(s.catalog()); err != nil {
			return err
		}
		if err := c.ready(); err != nil {
			return err
		}
		data, err := c.pack(store.ParseTime(r.updated))
		if err != nil {
			return err
		}
		if _, err := ReadPackage(data); err != nil {
			return err
		}
		_, err = s.d.DB.ExecContext(ctx, `UPDATE templates SET status = ?, updated_at = ? WHERE id = ?`,
			StatusSubmitted, store.FormatTime(s.now()), id)
		return err
	}()
	s.mu.Unlock()
	if err != nil {
		return Template{}, err
	}
	s.publish("template.updated", id)
	return s.Get(ctx, id)
}

// Export returns the template as a .rerun-template file. The package is read
// back as Import would before it is returned, so what is exported imports.
func (s *Service) Export(ctx context.Context, id string) ([]byte, error) {
	c, r, err := s.read(ctx, id)
	if err != nil {
		return nil, err
	}
	data, err := c.pack(store.ParseTime(r.updated))
	if err != nil {
		return nil, fmt.Errorf("export template %s: %w", id, err)
	}
	if _, err := ReadPackage(data); err != nil {
		return nil, fmt.Errorf("export template %s: %w", id, err)
	}
	return data, nil
}

// Import adds the template a .rerun-template file holds to the library, as
// a draft. A package that breaks a rule is refused whole, with an error
// saying what is wrong; nothing of it is kept.
func (s *Service) Import(ctx context.Context, data []byte) (Template, error) {
	p, err := ReadPackage(data)
	if err != nil {
		return Template{}, err
	}
	return s.insert(ctx, p, "")
}
