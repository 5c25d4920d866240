package skill

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Limits on a skill folder (imports and Upsert alike).
const (
	MaxFiles      = 1000     // files in one skill, SKILL.md included
	MaxTotalBytes = 10 << 20 // uncompressed bytes of one skill
)

// FileName is the skill's main file.
const FileName = "SKILL.md"

// Config configures a Service.
type Config struct {
	// AgentsDir is the workspace's agents/ folder; an agent's skills live in
	// AgentsDir/<agent id>/skills/<name>/.
	AgentsDir string
	Now       func() time.Time // default time.Now
}

// Service reads and writes the skills of a workspace's agents.
type Service struct {
	db      *store.DB
	cfg     Config
	changed func(ctx context.Context, agentID, name string, deleted bool)
}

// OnChange sets fn to be told after a skill was written or deleted (device
// sync records deletions: a skill's versions stay in the database). Set it
// before the service is used.
func (s *Service) OnChange(fn func(ctx context.Context, agentID, name string, deleted bool)) {
	s.changed = fn
}

// New returns the skill service.
func New(db *store.DB, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{db: db, cfg: cfg}
}

// Summary is one skill in a list. Error is set (and Description empty) when
// its SKILL.md on disk does not parse, e.g. after a hand edit.
type Summary struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Error       string `json:"error,omitempty"`
}

// Loaded is a skill with the reference files of its folder.
type Loaded struct {
	Skill
	// Files are the folder's other files, slash-separated paths relative to
	// the folder, sorted.
	Files []string `json:"files"`
}

// Version is one saved SKILL.md.
type Version struct {
	Version   int       `json:"version"`
	Body      string    `json:"body"` // the whole SKILL.md
	CreatedAt time.Time `json:"created_at"`
}

var agentIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Dir is the skills folder of an agent.
func (s *Service) Dir(agentID string) string {
	return filepath.Join(s.cfg.AgentsDir, agentID, "skills")
}

func (s *Service) skillDir(agentID, name string) (string, error) {
	if !agentIDRE.MatchString(agentID) {
		return "", fault.Invalid("bad agent id %q", agentID)
	}
	if err := CheckName(name); err != nil {
		return "", err
	}
	return filepath.Join(s.Dir(agentID), name), nil
}

// List returns the agent's skills, sorted by name.
func (s *Service) List(ctx context.Context, agentID string) ([]Summary, error) {
	if !agentIDRE.MatchString(agentID) {
		return nil, fault.Invalid("bad agent id %q", agentID)
	}
	entries, err := os.ReadDir(s.Dir(agentID))
	if errors.Is(err, fs.ErrNotExist) {
		return []Summary{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list skills: %w", err)
	}
	out := []Summary{}
	for _, e := range entries {
		if !e.IsDir() || CheckName(e.Name()) != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(s.Dir(agentID), e.Name(), FileName))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		sum := Summary{Name: e.Name()}
		if err != nil {
			sum.Error = err.Error()
		} else if sk, err := Parse(data); err != nil {
			sum.Error = fault.Message(err)
		} else if sk.Name != e.Name() {
			sum.Error = fmt.Sprintf("SKILL.md names the skill %q but its folder is %q", sk.Name, e.Name())
		} else {
			sum.Description = sk.Description
		}
		out = append(out, sum)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Index is the agent's skill index for the prompt: one "name: description"
// line per valid skill, sorted by name, "" when there is none.
func (s *Service) Index(ctx context.Context, agentID string) (string, error) {
	list, err := s.List(ctx, agentID)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, sk := range list {
		if sk.Error != "" {
			continue
		}
		b.WriteString(IndexLine(sk.Name, sk.Description))
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// Load returns a skill and the list of its reference files.
func (s *Service) Load(ctx context.Context, agentID, name string) (Loaded, error) {
	dir, err := s.skillDir(agentID, name)
	if err != nil {
		return Loaded{}, err
	}
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if errors.Is(err, fs.ErrNotExist) {
		return Loaded{}, fault.NotFound("no skill %q", name)
	}
	if err != nil {
		return Loaded{}, fmt.Errorf("load skill %s: %w", name, err)
	}
	sk, err := Parse(data)
	if err != nil {
		return Loaded{}, fmt.Errorf("load skill %s: %w", name, err)
	}
	files := []string{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() { // directories, and symlinks, which ReadFile would refuse anyway
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if rel = filepath.ToSlash(rel); rel != FileName {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		return Loaded{}, fmt.Errorf("load skill %s: %w", name, err)
	}
	sort.Strings(files)
	return Loaded{Skill: sk, Files: files}, nil
}

// cleanPath checks a path inside a skill folder: relative, slash-separated,
// no "..", no empty or dot parts.
func cleanPath(p string) (string, error) {
	p = strings.ReplaceAll(p, "\\", "/")
	switch {
	case p == "":
		return "", fault.Invalid("empty file path")
	case strings.HasPrefix(p, "/") || filepath.IsAbs(p) || filepath.VolumeName(p) != "" || (len(p) > 1 && p[1] == ':'):
		return "", fault.Invalid("file path %q must be relative to the skill folder", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", fault.Invalid("file path %q leaves the skill folder", p)
		}
	}
	c := path.Clean(p)
	if c == "." || strings.HasPrefix(c, "../") {
		return "", fault.Invalid("file path %q names no file", p)
	}
	return c, nil
}

// ReadFile returns one file of a skill's folder. The path is relative to the
// folder; "..", absolute paths and symlinks leading out are refused.
func (s *Service) ReadFile(ctx context.Context, agentID, name, file string) ([]byte, error) {
	dir, err := s.skillDir(agentID, name)
	if err != nil {
		return nil, err
	}
	rel, err := cleanPath(file)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fault.NotFound("no skill %q", name)
	}
	if err != nil {
		return nil, fmt.Errorf("read skill file: %w", err)
	}
	defer root.Close()
	st, err := root.Stat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fault.NotFound("skill %q has no file %q", name, rel)
	}
	if err != nil { // os.Root refuses symlinks that lead out of the folder
		return nil, fault.Invalid("skill %q: cannot read %q: it leads out of the skill folder", name, rel)
	}
	if !st.Mode().IsRegular() {
		return nil, fault.Invalid("skill %q: %q is not a file", name, rel)
	}
	if st.Size() > MaxTotalBytes {
		return nil, fault.Invalid("skill %q: %q is larger than %d MiB", name, rel, MaxTotalBytes>>20)
	}
	data, err := root.ReadFile(rel)
	if err != nil {
		return nil, fmt.Errorf("read skill file %q: %w", rel, err)
	}
	return data, nil
}

// Upsert creates or changes a skill: skillMD is the whole SKILL.md (its name
// must be name), files are reference files to write (path → content; a nil
// content deletes that file). Files not named are kept. The SKILL.md is saved
// as a new version when it changed.
func (s *Service) Upsert(ctx context.Context, agentID, name, skillMD string, files map[string][]byte) (Skill, error) {
	return s.write(ctx, agentID, name, []byte(skillMD), files, false)
}

// Create saves a new skill like Upsert, but refuses (ErrConflict) when the
// agent already has a skill of that name, so a person naming a new skill is
// told it is taken instead of overwriting the old one.
func (s *Service) Create(ctx context.Context, agentID, name, skillMD string) (Skill, error) {
	dir, err := s.skillDir(agentID, name)
	if err != nil {
		return Skill{}, err
	}
	if _, err := os.Stat(filepath.Join(dir, FileName)); err == nil {
		return Skill{}, fault.Conflict("there is already a skill named %s: open it, or pick another name", name)
	}
	return s.write(ctx, agentID, name, []byte(skillMD), nil, false)
}

func (s *Service) write(ctx context.Context, agentID, name string, skillMD []byte, files map[string][]byte, replace bool) (Skill, error) {
	dir, err := s.skillDir(agentID, name)
	if err != nil {
		return Skill{}, err
	}
	sk, err := Parse(skillMD)
	if err != nil {
		return Skill{}, err
	}
	if sk.Name != name {
		return Skill{}, fault.Invalid("SKILL.md names the skill %q, not %q: make them the same", sk.Name, name)
	}
	clean := map[string][]byte{}
	total := len(skillMD)
	for p, data := range files {
		c, err := cleanPath(p)
		if err != nil {
			return Skill{}, err
		}
		if c == FileName {
			return Skill{}, fault.Invalid("pass SKILL.md as the skill's text, not as a reference file")
		}
		clean[c] = data
		total += len(data)
	}
	if len(clean)+1 > MaxFiles {
		return Skill{}, fault.Invalid("a skill holds at most %d files (got %d)", MaxFiles, len(clean)+1)
	}
	if total > MaxTotalBytes {
		return Skill{}, fault.Invalid("a skill holds at most %d MiB (got %.1f MiB)", MaxTotalBytes>>20, float64(total)/(1<<20))
	}

	// Build the new folder aside when replacing, so a failed write leaves the
	// old one whole.
	target := dir
	if replace {
		if err := os.MkdirAll(s.Dir(agentID), 0o700); err != nil {
			return Skill{}, fmt.Errorf("write skill %s: %w", name, err)
		}
		if target, err = os.MkdirTemp(s.Dir(agentID), ".import-"); err != nil {
			return Skill{}, fmt.Errorf("write skill %s: %w", name, err)
		}
		defer os.RemoveAll(target)
	}
	if err := os.MkdirAll(target, 0o700); err != nil {
		return Skill{}, fmt.Errorf("write skill %s: %w", name, err)
	}
	root, err := os.OpenRoot(target)
	if err != nil {
		return Skill{}, fmt.Errorf("write skill %s: %w", name, err)
	}
	defer root.Close()
	for p, data := range clean {
		if data == nil {
			if err := root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return Skill{}, fmt.Errorf("write skill %s: remove %s: %w", name, p, err)
			}
			continue
		}
		if err := writeIn(root, p, data); err != nil {
			return Skill{}, fmt.Errorf("write skill %s: %w", name, err)
		}
	}
	if err := writeIn(root, FileName, skillMD); err != nil {
		return Skill{}, fmt.Errorf("write skill %s: %w", name, err)
	}
	if replace {
		old := target + ".old"
		if err := os.Rename(dir, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Skill{}, fmt.Errorf("write skill %s: %w", name, err)
		}
		if err := os.Rename(target, dir); err != nil {
			os.Rename(old, dir)
			return Skill{}, fmt.Errorf("write skill %s: %w", name, err)
		}
		os.RemoveAll(old)
	}
	if err := s.saveVersion(ctx, agentID, name, string(skillMD)); err != nil {
		return Skill{}, err
	}
	if s.changed != nil {
		s.changed(ctx, agentID, name, false)
	}
	return sk, nil
}

// writeIn writes data to p inside root, creating folders, through a temporary
// file renamed into place.
func writeIn(root *os.Root, p string, data []byte) error {
	if d := path.Dir(p); d != "." {
		if err := root.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	tmp := p + ".tmp"
	if err := root.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return root.Rename(tmp, p)
}

func (s *Service) saveVersion(ctx context.Context, agentID, name, body string) error {
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var last sql.NullString
		var v int
		err := tx.QueryRowContext(ctx, `SELECT version, body FROM skill_versions WHERE agent_id = ? AND name = ?
			ORDER BY version DESC LIMIT 1`, agentID, name).Scan(&v, &last)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if last.Valid && last.String == body {
			return nil
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO skill_versions (agent_id, name, version, body, created_at) VALUES (?, ?, ?, ?, ?)`,
			agentID, name, v+1, body, store.FormatTime(s.cfg.Now()))
		if err != nil && strings.Contains(err.Error(), "FOREIGN KEY") {
			return fault.NotFound("no agent %q", agentID)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("save skill version %s: %w", name, err)
	}
	return nil
}

// Versions returns every saved SKILL.md of a skill, newest first (kept after
// the skill is deleted).
func (s *Service) Versions(ctx context.Context, agentID, name string) ([]Version, error) {
	vs, err := store.Query(ctx, s.db, func(sc store.Scanner) (Version, error) {
		var v Version
		var at string
		err := sc.Scan(&v.Version, &v.Body, &at)
		v.CreatedAt = store.ParseTime(at)
		return v, err
	}, `SELECT version, body, created_at FROM skill_versions WHERE agent_id = ? AND name = ? ORDER BY version DESC`, agentID, name)
	if err != nil {
		return nil, fmt.Errorf("skill versions %s: %w", name, err)
	}
	return vs, nil
}

// Delete removes a skill's folder; its versions stay in the database.
func (s *Service) Delete(ctx context.Context, agentID, name string) error {
	dir, err := s.skillDir(agentID, name)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, FileName)); errors.Is(err, fs.ErrNotExist) {
		return fault.NotFound("no skill %q", name)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("delete skill %s: %w", name, err)
	}
	if s.changed != nil {
		s.changed(ctx, agentID, name, true)
	}
	return nil
}
