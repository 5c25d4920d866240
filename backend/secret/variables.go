package secret

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// KindVariablesChanged is the change published after a variable is set or
// deleted (no id: the list is reloaded, never a value).
const KindVariablesChanged = "variables.changed"

// maxValue bounds a value: secrets are tokens and keys, not files.
const maxValue = 64 << 10

// Info describes a stored variable; it never carries the value.
type Info struct {
	Name string `json:"name"`
	// Hosts are the hosts its value may be sent to (ParseHosts' form);
	// empty: any host.
	Hosts     []string  `json:"hosts"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Variables are one workspace's secret variables: sealed in its database,
// kept decrypted in memory so runs can resolve ${NAME} and mask the values in
// what they produce without a database read. It is safe for concurrent use.
type Variables struct {
	db    *store.DB
	box   *Box
	ws    string
	bus   *event.Bus
	write sync.Mutex // orders database writes with the memory updates that follow them

	mu       sync.RWMutex
	values   map[string]string
	hosts    map[string][]string          // by name; absent: any host
	extra    map[string]map[string]string // Mask's values, by group
	redactor atomic.Pointer[Redactor]
}

// NewVariables opens the variables of workspace workspaceID stored in db,
// decrypting them all with box. It fails, with ErrWrongKey, when some do not
// open with box's key rather than hand out garbage. bus may be nil.
func NewVariables(db *store.DB, box *Box, workspaceID string, bus *event.Bus) (*Variables, error) {
	v := &Variables{db: db, box: box, ws: workspaceID, bus: bus, values: map[string]string{}, hosts: map[string][]string{}}
	type row struct{ name, sealed, hosts string }
	rows, err := store.Query(context.Background(), db, func(s store.Scanner) (row, error) {
		var r row
		err := s.Scan(&r.name, &r.sealed, &r.hosts)
		return r, err
	}, `SELECT name, value, hosts FROM variables ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("read variables: %w", err)
	}
	var wrong []string
	for _, r := range rows {
		plain, err := box.Open(r.sealed, v.label(r.name))
		switch {
		case errors.Is(err, ErrWrongKey):
			wrong = append(wrong, r.name)
		case err != nil:
			return nil, fmt.Errorf("read variable %s: %w", r.name, err)
		default:
			v.values[r.name] = plain
			if h := decodeHosts(r.hosts); len(h) > 0 {
				v.hosts[r.name] = h
			}
		}
	}
	if len(wrong) > 0 {
		return nil, fmt.Errorf("read variables: %d of %d (%s) %w; restore the key they were saved with (the OS keychain entry “%s” or secret.key in the data folder; a database copied from another computer needs that computer's key)",
			len(wrong), len(rows), strings.Join(wrong, ", "), ErrWrongKey, keychainService)
	}
	v.redactor.Store(NewRedactor(v.values))
	return v, nil
}

// Mask has the values masked like the variables' although they are none:
// the app's own secrets, which no agent may reference but whose values an
// agent may still come across (a provider key in the app's environment, the
// relay's secret). group names where they come from; a later call for the
// same group replaces its values (none: forgets them). Names label the
// masks; values too short to mask are left out, as Set refuses them.
func (v *Variables) Mask(group string, values map[string]string) {
	v.write.Lock()
	defer v.write.Unlock()
	kept := map[string]string{}
	for name, value := range values {
		if len(stripBreaks(value)) >= minMaskable {
			kept[name] = value
		}
	}
	v.mu.Lock()
	if v.extra == nil {
		v.extra = map[string]map[string]string{}
	}
	v.extra[group] = kept
	v.mu.Unlock()
	v.changed(func(map[string]string, map[string][]string) {})
}

// masked is every value the redactor masks: the variables' and Mask's (under
// NAME_APP where a variable already has the name). v.mu is held.
func (v *Variables) masked() map[string]string {
	all := maps.Clone(v.values)
	for _, group := range slices.Sorted(maps.Keys(v.extra)) {
		for name, value := range v.extra[group] {
			if _, taken := all[name]; taken {
				name += "_APP"
			}
			all[name] = value
		}
	}
	return all
}

// label binds a sealed value to its workspace and name, so it cannot be
// moved to another variable or another workspace's database.
func (v *Variables) label(name string) string { return v.ws + "/" + name }

// List returns every variable, by name, without values.
func (v *Variables) List(ctx context.Context) ([]Info, error) {
	list, err := store.Query(ctx, v.db, func(s store.Scanner) (Info, error) {
		var i Info
		var created, updated, hosts string
		err := s.Scan(&i.Name, &hosts, &created, &updated)
		i.Hosts = decodeHosts(hosts)
		i.CreatedAt, i.UpdatedAt = store.ParseTime(created), store.ParseTime(updated)
		return i, err
	}, `SELECT name, hosts, created_at, updated_at FROM variables ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list variables: %w", err)
	}
	return list, nil
}

// Set adds or replaces the variable name (a replaced one keeps its
// created_at and its hosts).
func (v *Variables) Set(ctx context.Context, name, value string) (Info, error) {
	return v.Update(ctx, name, Change{Value: &value})
}

// Change is what Update changes of a variable: its value, its hosts, or
// both (nil: unchanged).
type Change struct {
	Value *string   `json:"value"`
	Hosts *[]string `json:"hosts"`
}

// Update changes the variable name; a new one needs a value. Hosts are
// checked and normalized by ParseHosts.
func (v *Variables) Update(ctx context.Context, name string, c Change) (Info, error) {
	if !validName(name) {
		return Info{}, fault.Invalid("%s is not a valid variable name: use capital letters A–Z, digits and _, starting with a letter, at most 64 characters (e.g. GITHUB_TOKEN)", quoteSnippet(name))
	}
	if c.Value == nil && c.Hosts == nil {
		return Info{}, fault.Invalid("nothing to change for %s: give a value, hosts or both", name)
	}
	if c.Value != nil {
		value := *c.Value
		if len(stripBreaks(value)) < minMaskable {
			return Info{}, fault.Invalid("the value of %s is too short: it needs at least %d bytes (line breaks not counted), because a shorter value cannot be masked reliably in tool outputs and logs", name, minMaskable)
		}
		if len(value) > maxValue {
			return Info{}, fault.Invalid("the value of %s is larger than 64 KiB; variables hold tokens, passwords and keys, so store a large file in the box and keep only its password here", name)
		}
	}
	var hosts []string
	if c.Hosts != nil {
		var err error
		if hosts, err = ParseHosts(*c.Hosts); err != nil {
			return Info{}, fault.Invalid("hosts of %s: %v", name, err)
		}
	}
	v.write.Lock()
	defer v.write.Unlock()
	now := store.FormatTime(time.Now())
	var created, stored string
	err := v.db.Tx(ctx, func(tx *sql.Tx) error {
		switch {
		case c.Value != nil:
			sealed := v.box.Seal(*c.Value, v.label(name))
			keep := c.Hosts == nil // a new value alone keeps the hosts
			return tx.QueryRowContext(ctx, `INSERT INTO variables (name, value, hosts, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at,
					hosts = CASE WHEN ? THEN variables.hosts ELSE excluded.hosts END
				RETURNING created_at, hosts`, name, sealed, encodeHosts(hosts), now, now, keep).Scan(&created, &stored)
		default:
			err := tx.QueryRowContext(ctx, `UPDATE variables SET hosts = ?, updated_at = ? WHERE name = ? RETURNING created_at, hosts`,
				encodeHosts(hosts), now, name).Scan(&created, &stored)
			if errors.Is(err, sql.ErrNoRows) {
				return fault.NotFound("no workspace variable named %s to set the hosts of: give its value too to add it", name)
			}
			return err
		}
	})
	if err != nil {
		if fault.Is(err) {
			return Info{}, err
		}
		return Info{}, fmt.Errorf("save variable %s: %w", name, err)
	}
	hosts = decodeHosts(stored)
	v.changed(func(m map[string]string, h map[string][]string) {
		if c.Value != nil {
			m[name] = *c.Value
		}
		if len(hosts) > 0 {
			h[name] = hosts
		} else {
			delete(h, name)
		}
	})
	return Info{Name: name, Hosts: hosts, CreatedAt: store.ParseTime(created), UpdatedAt: store.ParseTime(now)}, nil
}

// encodeHosts is the stored form of a host list: a JSON array.
func encodeHosts(hosts []string) string {
	if len(hosts) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(hosts)
	return string(b)
}

// decodeHosts reads the stored form, dropping what does not parse (a row
// synced from a newer version): never nil.
func decodeHosts(stored string) []string {
	var raw []string
	if json.Unmarshal([]byte(stored), &raw) != nil {
		return []string{}
	}
	hosts, err := ParseHosts(raw)
	if err != nil {
		return []string{}
	}
	return hosts
}

// Delete removes the variable name.
func (v *Variables) Delete(ctx context.Context, name string) error {
	v.write.Lock()
	defer v.write.Unlock()
	var n int64
	err := v.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM variables WHERE name = ?`, name)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("delete variable %s: %w", quoteSnippet(name), err)
	}
	if n == 0 {
		return fault.NotFound("no workspace variable named %s (names are case-sensitive); Settings → Variables lists them", quoteSnippet(name))
	}
	v.changed(func(m map[string]string, h map[string][]string) { delete(m, name); delete(h, name) })
	return nil
}

// changed applies edit to the values after a committed write, rebuilds the
// redactor and tells subscribers. v.write is held.
func (v *Variables) changed(edit func(values map[string]string, hosts map[string][]string)) {
	v.mu.Lock()
	edit(v.values, v.hosts)
	values := v.masked()
	v.mu.Unlock()
	v.redactor.Store(NewRedactor(values))
	if v.bus != nil {
		v.bus.Publish(event.Change{Workspace: v.ws, Kind: KindVariablesChanged})
	}
}

// Names returns the names of all variables, sorted.
func (v *Variables) Names() []string {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return slices.Sorted(maps.Keys(v.values))
}

// Lookup returns the value of name.
func (v *Variables) Lookup(name string) (string, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	s, ok := v.values[name]
	return s, ok
}

// Has reports whether name is set.
func (v *Variables) Has(name string) bool {
	_, ok := v.Lookup(name)
	return ok
}

// Resolve replaces the ${NAME} references in text with the values (see the
// function Resolve), all from one moment's values.
func (v *Variables) Resolve(text string) (string, error) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return Resolve(text, func(name string) (string, bool) {
		s, ok := v.values[name]
		return s, ok
	})
}

// Redact masks every variable's value (and Mask's), in its common encodings,
// in s.
func (v *Variables) Redact(s string) string { return v.redactor.Load().Redact(s) }

// Redactor is the redactor of this moment's values, for an output that is
// masked before it is cut (Redactor.RedactRange).
func (v *Variables) Redactor() *Redactor { return v.redactor.Load() }

// validName reports whether name matches ^[A-Z][A-Z0-9_]{0,63}$.
func validName(name string) bool {
	if name == "" || len(name) > 64 || name[0] < 'A' || name[0] > 'Z' {
		return false
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
