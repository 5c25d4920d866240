package replica

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// MaxFolderBytes bounds the files one record carries (a template's
// folder): sealed and base64'd they stay under the relay's 1 MiB. A larger
// folder syncs its row only, and the record says so.
const MaxFolderBytes = 600 << 10

var folderPart = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// folderDir is the local folder of a record's files, checked to stay
// inside the workspace folder.
func (e *Engine) folderDir(t *table, keyVals []any) (string, error) {
	rel := t.Folder(keyVals)
	for _, part := range strings.Split(rel, "/") {
		if !folderPart.MatchString(part) {
			return "", fmt.Errorf("folder %q is not a plain path", rel)
		}
	}
	return filepath.Join(e.cfg.Dir, filepath.FromSlash(rel)), nil
}

// readFolder reads the record's folder into r.Files, or sets FilesOmitted.
func (e *Engine) readFolder(t *table, r *Record) error {
	var keyVals []any
	if err := json.Unmarshal([]byte(r.PK), &keyVals); err != nil {
		return err
	}
	dir, err := e.folderDir(t, keyVals)
	if err != nil {
		return err
	}
	files := map[string][]byte{}
	total := 0
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if total += int(info.Size()); total > MaxFolderBytes {
			return errTooLarge
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = data
		return nil
	})
	switch {
	case errors.Is(err, errTooLarge):
		e.log.Warn("sync: a folder is too large to carry; its row syncs without it", "table", t.Name, "limit_kib", MaxFolderBytes>>10)
		r.FilesOmitted = true
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	}
	r.Files = files
	return nil
}

var errTooLarge = errors.New("too large")

// writeFolder makes the record's folder what the record carries: built
// aside, then swapped in, so a failure leaves the old one whole.
func (e *Engine) writeFolder(t *table, a Applied) error {
	keyVals := make([]any, len(t.pk))
	for i, c := range t.pk {
		keyVals[i] = a.Key[c]
	}
	dir, err := e.folderDir(t, keyVals)
	if err != nil {
		return err
	}
	if a.Deleted {
		return os.RemoveAll(dir)
	}
	if a.FilesOmitted {
		return nil
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return err
	}
	stage, err := os.MkdirTemp(parent, ".sync-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	root, err := os.OpenRoot(stage)
	if err != nil {
		return err
	}
	defer root.Close()
	for rel, data := range a.Files {
		c := path.Clean(rel)
		if rel == "" || path.IsAbs(rel) || c == "." || c == ".." || strings.HasPrefix(c, "../") || strings.Contains(rel, "\\") {
			return fmt.Errorf("file path %q leaves its folder", rel)
		}
		if d := path.Dir(c); d != "." {
			if err := root.MkdirAll(d, 0o700); err != nil {
				return err
			}
		}
		if err := root.WriteFile(c, data, 0o600); err != nil {
			return err
		}
	}
	old := stage + ".old"
	if err := os.Rename(dir, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(stage, dir); err != nil {
		os.Rename(old, dir)
		return err
	}
	return os.RemoveAll(old)
}
