package backup

// A workspace backed up into one backup file, and such a file unpacked as a
// new workspace's folder.
//
// What a backup holds: workspace.db, shared.db and every agent.db, each
// copied with VACUUM INTO (never a file copy of a live database); every
// other file of the workspace folder (the shared folder, the agents' files
// and skills, templates, memory vectors); and the variables' values, only
// inside the backup's encryption: the copied workspace.db holds no value
// sealed with this machine's data key. Left out: the agents' browser
// profiles (a live Chromium's cache and cookies), the relay link and its
// deliveries (a restored workspace links again), symbolic links.

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
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Workspace is one workspace as its backups see it: its folder, its
// database (which also keeps the schedule and the last result), its
// variables, and the data key that seals the kept passphrase. The
// composition root makes one per call.
type Workspace struct {
	ID, Name, Dir string
	DB            *store.DB
	Variables     *secret.Variables
	Box           *secret.Box
	Logger        *slog.Logger
}

// variablesEntry is the backup entry that carries the variables' values.
const variablesEntry = "variables.json"

// savedVariable is one variable as a backup carries it.
type savedVariable struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// relayMetaKey is relaylink's meta row of the link (sealed with the data key).
const relayMetaKey = "relay"

// Result says what a backup wrote.
type Result struct {
	Files    int       `json:"files"`
	Bytes    int64     `json:"bytes"` // before encryption
	Took     string    `json:"took"`
	Finished time.Time `json:"finished"`
}

// Backup writes w to out as one backup file encrypted under passphrase.
// app is the version of Rerun writing it.
func (w Workspace) Backup(ctx context.Context, passphrase, app string, out io.Writer) (Result, error) {
	start := time.Now()
	// Beside the workspace's folder, not in it: the walk below would find it.
	tmp, err := os.MkdirTemp(filepath.Dir(w.Dir), ".backup-")
	if err != nil {
		return Result{}, fmt.Errorf("back up: %w", err)
	}
	defer os.RemoveAll(tmp)
	bw, err := NewWriter(out, passphrase, Header{
		WorkspaceID: w.ID, WorkspaceName: w.Name, CreatedAt: start.UTC(), App: app,
	})
	if err != nil {
		return Result{}, err
	}
	// The workspace database first, without the values sealed with this
	// machine's key; then the values, inside the encryption only.
	if err := addDB(ctx, bw, w.DB, tmp, "workspace.db", stripSealed); err != nil {
		return Result{}, err
	}
	var saved []savedVariable
	list, err := w.Variables.List(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("back up variables: %w", err)
	}
	for _, v := range list {
		if value, ok := w.Variables.Lookup(v.Name); ok {
			saved = append(saved, savedVariable{Name: v.Name, Value: value})
		}
	}
	b, _ := json.Marshal(saved)
	if err := bw.AddBytes(variablesEntry, b); err != nil {
		return Result{}, err
	}
	err = filepath.WalkDir(w.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(w.Dir, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if skipDir(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || skipFile(rel) {
			return nil
		}
		if isOwnDB(rel) {
			db, err := store.Open(ctx, path, nil)
			if err != nil {
				return err
			}
			defer db.Close()
			return addDB(ctx, bw, db, tmp, rel, nil)
		}
		return addFile(bw, path, rel)
	})
	if err != nil {
		return Result{}, fmt.Errorf("back up workspace %q: %w", w.Name, err)
	}
	if err := bw.Close(); err != nil {
		return Result{}, err
	}
	m := bw.Manifest()
	res := Result{Files: len(m.Files), Bytes: m.Total, Took: time.Since(start).Round(time.Millisecond).String(), Finished: time.Now().UTC()}
	w.Logger.Info("workspace backed up", "workspace", w.ID, "files", res.Files, "bytes", res.Bytes, "took", res.Took)
	return res, nil
}

// skipDir: the agents' browser profiles, and any temporary folder.
func skipDir(rel string) bool {
	parts := strings.Split(rel, "/")
	return len(parts) == 3 && parts[0] == "agents" && parts[2] == "browser" || strings.HasPrefix(parts[len(parts)-1], ".backup-")
}

// skipFile: the databases copied apart (and their journals), the relay's.
func skipFile(rel string) bool {
	base := rel
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		base = strings.TrimSuffix(base, suffix)
	}
	if base != rel && (isOwnDB(base) || base == "relay-client.db") {
		return true
	}
	return rel == "workspace.db" || rel == "relay-client.db"
}

// isOwnDB: the databases copied with VACUUM INTO besides workspace.db.
func isOwnDB(rel string) bool {
	if rel == "shared.db" {
		return true
	}
	parts := strings.Split(rel, "/")
	return len(parts) == 3 && parts[0] == "agents" && parts[2] == "agent.db"
}

// addDB copies db consistently with VACUUM INTO, lets edit change the copy,
// and adds it as name.
func addDB(ctx context.Context, bw *Writer, db *store.DB, tmp, name string, edit func(context.Context, *store.DB) error) error {
	copyPath := filepath.Join(tmp, strings.ReplaceAll(name, "/", "_"))
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, copyPath); err != nil {
		return fmt.Errorf("copy %s: %w", name, err)
	}
	defer os.Remove(copyPath)
	if edit != nil {
		c, err := store.Open(ctx, copyPath, nil)
		if err != nil {
			return fmt.Errorf("copy %s: %w", name, err)
		}
		err = edit(ctx, c)
		// Back to one file: a copy in WAL mode keeps its changes beside it.
		if err == nil {
			_, err = c.ExecContext(ctx, `PRAGMA journal_mode = DELETE`)
		}
		c.Close()
		if err != nil {
			return fmt.Errorf("copy %s: %w", name, err)
		}
	}
	return addFile(bw, copyPath, name)
}

// stripSealed empties what the copy holds sealed with the data key (the
// variables' values, the relay link, the kept backup passphrase; with it
// the last backup's result) and vacuums, so no trace is left in
// free pages.
func stripSealed(ctx context.Context, db *store.DB) error {
	for _, q := range []string{`UPDATE variables SET value = ''`, `DELETE FROM meta WHERE key IN ('` + relayMetaKey + `', '` + scheduleKey + `', '` + lastKey + `')`, `VACUUM`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

func addFile(bw *Writer, path, name string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	return bw.Add(name, st.Size(), f)
}

// Check decrypts and checks the backup file at path, writing nothing.
func Check(path, passphrase string) (Header, Manifest, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, Manifest{}, fault.Invalid("open the backup: %v", err)
	}
	defer f.Close()
	h, m, err := Read(f, passphrase, nil)
	return h, m, readError(err)
}

// readError turns a reader's failure into a fault the person can act on.
func readError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrPassphrase):
		return fault.Invalid("the passphrase does not open this backup: type the passphrase it was made with")
	case errors.Is(err, ErrDamaged):
		return fault.Invalid("this backup cannot be restored (%v); nothing was changed. Use another backup file", err)
	}
	return err
}

// Restored is the new workspace a backup is unpacked as: its id and name,
// and this machine's data key, which seals its variables again.
type Restored struct {
	ID, Name string
	Box      *secret.Box
}

// Unpack writes the backup file at path into dir (empty, made by the
// caller) as the folder of workspace to: every file checked as it is
// read, then workspace.db made this machine's (its schema migrated, its
// variables sealed again under to.ID, its name set, API keys, the relay
// link and the backup schedule gone). On an error, what is in dir is the
// caller's to remove; check the file with Check first, so that a damaged
// or wrong-passphrase file is refused before anything is written.
func Unpack(ctx context.Context, path, passphrase, dir string, to Restored) error {
	var saved []savedVariable
	f, err := os.Open(path)
	if err != nil {
		return fault.Invalid("open the backup: %v", err)
	}
	defer f.Close()
	_, _, err = Read(f, passphrase, func(rel string, size int64, r io.Reader) error {
		if rel == variablesEntry {
			b, err := io.ReadAll(io.LimitReader(r, 64<<20))
			if err != nil {
				return err
			}
			if err := json.Unmarshal(b, &saved); err != nil {
				return fmt.Errorf("%w: unreadable variables: %v", ErrDamaged, err)
			}
			return nil
		}
		return writeRestored(dir, rel, r)
	})
	if err := readError(err); err != nil {
		return err // the file changed since it was checked
	}
	return prepareRestored(ctx, dir, to, saved)
}

// writeRestored writes one file of a backup under dir. The name was
// checked by the reader; the folders on the way are made here, never
// through a link.
func writeRestored(dir, rel string, r io.Reader) error {
	if err := CheckName(rel); err != nil {
		return err
	}
	path := filepath.Join(dir, filepath.FromSlash(rel))
	if !strings.HasPrefix(path, dir+string(filepath.Separator)) {
		return fmt.Errorf("%w: %q leaves the workspace folder", ErrDamaged, rel)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// prepareRestored makes the restored workspace.db this machine's: its
// schema migrated, its variables sealed with this machine's key under the
// new id, its name set, API keys and relay link gone.
func prepareRestored(ctx context.Context, dir string, to Restored, saved []savedVariable) error {
	path := filepath.Join(dir, "workspace.db")
	if _, err := os.Stat(path); err != nil {
		return fault.Invalid("this backup has no workspace.db; nothing was changed. Use another backup file")
	}
	db, err := store.Open(ctx, path, store.WorkspaceMigrations())
	if err != nil {
		return fault.Invalid("the backup's workspace database does not open (%v); nothing was changed", err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		return fault.Invalid("the backup's workspace database is damaged (%s); nothing was changed", check)
	}
	values := map[string]string{}
	for _, v := range saved {
		values[v.Name] = v.Value
	}
	return db.Tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT name FROM variables`)
		if err != nil {
			return err
		}
		var names []string
		for rows.Next() {
			var n string
			rows.Scan(&n)
			names = append(names, n)
		}
		rows.Close()
		for _, n := range names {
			value, ok := values[n]
			if !ok {
				return fault.Invalid("the backup has no value for variable %s; nothing was changed", n)
			}
			sealed, err := secret.SealFor(to.Box, to.ID, n, value)
			if err != nil {
				return fault.Invalid("restore variable %s: %v", n, err)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE variables SET value = ? WHERE name = ?`, sealed, n); err != nil {
				return err
			}
		}
		for _, q := range []string{`DELETE FROM api_keys`, `DELETE FROM meta WHERE key IN ('relay', 'name', 'created_at', '` + scheduleKey + `', '` + lastKey + `')`} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('name', ?), ('created_at', ?)`, to.Name, store.FormatTime(time.Now()))
		return err
	})
}

// FileName is the file name a backup of workspace name made at t
// gets: rerun-<name>-<YYYY-MM-DD-HHMMSS.mmm>.rerun-backup (UTC), the name kept to
// letters, digits and dashes.
func FileName(name string, t time.Time) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	slug := strings.Trim(b.String(), "-")
	if slug == "" {
		slug = "workspace"
	}
	return "rerun-" + slug + "-" + t.UTC().Format(stamp) + Ext
}

// stamp is the date in a backup's name; names sort by it.
const stamp = "2006-01-02-150405.000"

// Ext ends every backup file's name.
const Ext = ".rerun-backup"
