package replica

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// Transport carries sealed records to and from the relay's change log
// (sync/client implements it).
type Transport interface {
	// Push appends changes to the log and returns the log's newest seq.
	Push(ctx context.Context, changes []protocol.Change) (int64, error)
	// Pull returns up to limit changes with a seq above after.
	Pull(ctx context.Context, after int64, limit int) (protocol.ChangePage, error)
}

// Config configures an Engine.
type Config struct {
	// Workspace is the workspace id: it binds every sealed record to it.
	Workspace string
	// Dir is the workspace folder (template folders ride in records).
	Dir string
	// Device is this device's id ("dev_…", see Device).
	Device string
	Bus    *event.Bus   // nil: no change events
	Logger *slog.Logger // nil: discard
	// Tables is what syncs; nil means Tables.
	Tables []Table
	// PullEvery is how often Serve pulls without being told to (default
	// 30 s); StampEvery how often it stamps captured changes when no
	// change event came (default 2 s).
	PullEvery, StampEvery time.Duration
	// Now is the wall clock (default time.Now).
	Now func() time.Time
}

// Status is what the app shows about sync.
type Status struct {
	Enabled bool `json:"enabled"`
	// Pending counts local changes not yet pushed.
	Pending   int       `json:"pending"`
	LastSync  time.Time `json:"last_sync"` // last successful push or pull
	LastError string    `json:"last_error,omitempty"`
	Seq       int64     `json:"seq"` // the relay seq pulled up to
	// Parked counts pulled records waiting for their parent.
	Parked int `json:"parked"`
	// AutomationsDevice fires the schedules; Device is this device.
	AutomationsDevice string `json:"automations_device"`
	Device            string `json:"device"`
}

// Engine syncs one workspace's records with its other devices.
type Engine struct {
	db    *store.DB
	cfg   Config
	log   *slog.Logger
	clock clock

	pull  chan struct{} // Notify: pull soon
	stamp chan struct{} // a local change: stamp and push soon

	mu        sync.Mutex
	tables    []*table // nil until read from the schema
	byName    map[string]*table
	lastSync  time.Time
	lastError string
	hooks     map[string][]func(context.Context, Applied)
	loaded    bool
	// transforms are the tables' Transforms (transform.go).
	transforms map[string]Transform
}

// New returns the engine of the workspace whose database is db. It changes
// nothing until Enable.
func New(db *store.DB, cfg Config) *Engine {
	if cfg.Tables == nil {
		cfg.Tables = Tables
	}
	if cfg.PullEvery <= 0 {
		cfg.PullEvery = 30 * time.Second
	}
	if cfg.StampEvery <= 0 {
		cfg.StampEvery = 2 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Engine{db: db, cfg: cfg, log: log.With("device", cfg.Device),
		pull: make(chan struct{}, 1), stamp: make(chan struct{}, 1), hooks: map[string][]func(context.Context, Applied){}}
}

// Device returns this machine's device id, "dev_…", kept in
// <dataDir>/device.json (made on first use). Every workspace of the data
// directory shares it.
func Device(dataDir string) (string, error) {
	path := filepath.Join(dataDir, "device.json")
	var d struct {
		Device string `json:"device"`
	}
	b, err := os.ReadFile(path)
	if err == nil {
		if err := json.Unmarshal(b, &d); err != nil || !protocol.ValidDevice(d.Device) {
			return "", fmt.Errorf("read %s: not a device id file; delete it to make a new device id", path)
		}
		return d.Device, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read device id: %w", err)
	}
	d.Device = store.NewID("dev")
	b, _ = json.Marshal(d)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return "", fmt.Errorf("write device id: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("write device id: %w", err)
	}
	return d.Device, nil
}

// OnApply adds fn to what runs after remote changes to table committed,
// once per changed record, outside any transaction (create the agent's
// folder, write a skill's file, re-plan a schedule).
func (e *Engine) OnApply(table string, fn func(context.Context, Applied)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.hooks[table] = append(e.hooks[table], fn)
}

// schema resolves the table spec against the database once.
func (e *Engine) schema(ctx context.Context) ([]*table, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.tables != nil {
		return e.tables, nil
	}
	ts, err := readSchema(ctx, e.db.DB, e.cfg.Tables)
	if err != nil {
		return nil, err
	}
	e.tables, e.byName = ts, map[string]*table{}
	for _, t := range ts {
		e.byName[t.Name] = t
	}
	return ts, nil
}

func (e *Engine) table(name string) *table {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.byName[name]
}

// state reads one value of sync_state ("" when unset).
func state(ctx context.Context, q querier, key string) (string, error) {
	var v string
	err := q.QueryRowContext(ctx, `SELECT value FROM sync_state WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

func setState(ctx context.Context, tx *sql.Tx, key, value string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO sync_state (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	return err
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// loadClock reads the persisted clock once.
func (e *Engine) loadClock(ctx context.Context) error {
	e.mu.Lock()
	loaded := e.loaded
	e.mu.Unlock()
	if loaded {
		return nil
	}
	v, err := state(ctx, e.db, "hlc")
	if err != nil {
		return fmt.Errorf("read the sync clock: %w", err)
	}
	if v != "" {
		h, err := ParseHLC(v)
		if err != nil {
			return err
		}
		e.clock.observe(h)
	}
	e.mu.Lock()
	e.loaded = true
	e.mu.Unlock()
	return nil
}

// Enabled says whether this workspace syncs.
func (e *Engine) Enabled(ctx context.Context) bool {
	v, err := state(ctx, e.db, "enabled")
	return err == nil && v == "1"
}

// Enable installs the capture triggers (again: the table list may have
// grown) and marks the workspace synced. snapshot queues every existing
// row, for the first device; a device joining an existing workspace passes
// false and receives them. A table that joined the list since the last
// Enable has its rows queued either way.
func (e *Engine) Enable(ctx context.Context, snapshot bool) error {
	tables, err := e.schema(ctx)
	if err != nil {
		return err
	}
	err = e.db.Tx(ctx, func(tx *sql.Tx) error {
		was, err := state(ctx, tx, "enabled")
		if err != nil {
			return err
		}
		known, err := state(ctx, tx, "tables")
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, n := range strings.Split(known, ",") {
			seen[n] = true
		}
		if err := installTriggers(ctx, tx, tables); err != nil {
			return err
		}
		var names []string
		for _, t := range tables {
			names = append(names, t.Name)
			if snapshot || (was == "1" && !seen[t.Name]) {
				if err := queueAll(ctx, tx, t, e.cfg.Now()); err != nil {
					return err
				}
			}
		}
		if snapshot {
			if err := setState(ctx, tx, "first", "1"); err != nil {
				return err
			}
			// The first device fires the schedules until told otherwise.
			if _, err := tx.ExecContext(ctx, `INSERT INTO sync_settings (key, value) VALUES ('automations_device', ?)
				ON CONFLICT (key) DO NOTHING`, e.cfg.Device); err != nil {
				return err
			}
		}
		if err := setState(ctx, tx, "tables", strings.Join(names, ",")); err != nil {
			return err
		}
		return setState(ctx, tx, "enabled", "1")
	})
	if err != nil {
		return fmt.Errorf("enable sync: %w", err)
	}
	e.poke(e.stamp)
	return nil
}

// Disable removes the capture triggers and forgets what was captured and
// not yet pushed, and the position in the relay's log. Records already
// synced stay as they are.
func (e *Engine) Disable(ctx context.Context) error {
	err := e.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := dropTriggers(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM sync_outbox`); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM sync_records WHERE pushed = 0`); err != nil {
			return err
		}
		// The position in the relay's log: a link made later is to a new
		// log (unlinking makes the relay forget this one), numbered from 1.
		if _, err := tx.ExecContext(ctx, `DELETE FROM sync_state WHERE key = 'cursor'`); err != nil {
			return err
		}
		return setState(ctx, tx, "enabled", "0")
	})
	if err != nil {
		return fmt.Errorf("disable sync: %w", err)
	}
	return nil
}

// Notify tells the engine the relay's log reached seq last: it pulls soon
// when that is past its cursor.
func (e *Engine) Notify(last int64) {
	if cur, err := e.cursor(context.Background()); err == nil && last <= cur {
		return
	}
	e.poke(e.pull)
}

func (e *Engine) poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (e *Engine) cursor(ctx context.Context) (int64, error) {
	v, err := state(ctx, e.db, "cursor")
	if err != nil || v == "" {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

// Status reports sync for the app.
func (e *Engine) Status() Status {
	ctx := context.Background()
	s := Status{Enabled: e.Enabled(ctx), Device: e.cfg.Device}
	s.Seq, _ = e.cursor(ctx)
	_ = e.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM sync_records WHERE pushed = 0)
		+ (SELECT count(*) FROM (SELECT DISTINCT tbl, pk FROM sync_outbox)), (SELECT count(*) FROM sync_parked)`).Scan(&s.Pending, &s.Parked)
	s.AutomationsDevice, _ = e.AutomationsDevice(ctx)
	e.mu.Lock()
	s.LastSync, s.LastError = e.lastSync, e.lastError
	e.mu.Unlock()
	return s
}

// AutomationsDevice is the device that fires the workspace's schedules
// ("" before sync is enabled).
func (e *Engine) AutomationsDevice(ctx context.Context) (string, error) {
	var v string
	err := e.db.QueryRowContext(ctx, `SELECT value FROM sync_settings WHERE key = 'automations_device'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// SetAutomationsDevice makes device the one that fires the schedules, on
// every device of the workspace.
func (e *Engine) SetAutomationsDevice(ctx context.Context, device string) error {
	if !protocol.ValidDevice(device) {
		return fmt.Errorf("device %q is not a device id (\"dev_…\")", device)
	}
	_, err := e.db.ExecContext(ctx, `INSERT INTO sync_settings (key, value) VALUES ('automations_device', ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, device)
	if err != nil {
		return fmt.Errorf("set the automations device: %w", err)
	}
	e.poke(e.stamp)
	e.publish(event.Change{Kind: "sync.settings"})
	return nil
}

// Active says whether this device fires the workspace's schedules: always
// when sync is off; when on, only if it is the automations device (or none
// is named yet and this device enabled sync first).
func (e *Engine) Active() bool {
	ctx := context.Background()
	if !e.Enabled(ctx) {
		return true
	}
	dev, err := e.AutomationsDevice(ctx)
	if err != nil {
		return true // a read error must not stop the schedules
	}
	if dev == "" {
		first, _ := state(ctx, e.db, "first")
		return first == "1"
	}
	return dev == e.cfg.Device
}

func (e *Engine) publish(c event.Change) {
	if e.cfg.Bus != nil {
		c.Workspace = e.cfg.Workspace
		e.cfg.Bus.Publish(c)
	}
}

func (e *Engine) setResult(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		e.lastError = err.Error()
		return
	}
	e.lastError = ""
	e.lastSync = e.cfg.Now()
}
