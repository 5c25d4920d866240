package skill

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// skipped are archive entries every zip tool adds and no skill means.
func skipped(name string) bool {
	base := path.Base(name)
	return strings.HasPrefix(name, "__MACOSX/") || base == ".DS_Store" || base == "Thumbs.db"
}

// ImportZip installs a skill from a .zip of its folder, as Claude and other
// Agent Skills tools export it: SKILL.md either at the root or inside one top
// folder (whatever its name; the skill is named by its front matter). An
// existing skill of that name is replaced (its versions are kept). Archives
// with paths leaving the folder, absolute paths, symlinks, more than MaxFiles
// files or more than MaxTotalBytes uncompressed are refused.
func (s *Service) ImportZip(ctx context.Context, agentID string, r io.ReaderAt, size int64) (Skill, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return Skill{}, fault.Invalid("not a readable .zip archive: %v", err)
	}
	var entries []*zip.File
	var declared uint64
	for _, f := range zr.File {
		name := strings.ReplaceAll(f.Name, "\\", "/")
		if _, err := cleanPath(name); err != nil {
			return Skill{}, fault.Invalid("refused archive: entry %q points outside the skill folder", f.Name)
		}
		if f.Mode()&fs.ModeSymlink != 0 {
			return Skill{}, fault.Invalid("refused archive: entry %q is a symbolic link; skills hold plain files only", f.Name)
		}
		if f.FileInfo().IsDir() || skipped(name) {
			continue
		}
		if !f.Mode().IsRegular() {
			return Skill{}, fault.Invalid("refused archive: entry %q is not a plain file", f.Name)
		}
		entries = append(entries, f)
		declared += f.UncompressedSize64
		if len(entries) > MaxFiles {
			return Skill{}, fault.Invalid("refused archive: more than %d files; a skill is a small folder", MaxFiles)
		}
		if declared > MaxTotalBytes {
			return Skill{}, fault.Invalid("refused archive: more than %d MiB uncompressed", MaxTotalBytes>>20)
		}
	}
	prefix, err := skillPrefix(entries)
	if err != nil {
		return Skill{}, err
	}
	var skillMD []byte
	files := map[string][]byte{}
	var total int64
	for _, f := range entries {
		rel := strings.TrimPrefix(strings.ReplaceAll(f.Name, "\\", "/"), prefix)
		rc, err := f.Open()
		if err != nil {
			return Skill{}, fault.Invalid("refused archive: entry %q: %v", f.Name, err)
		}
		// Declared sizes can lie: count what actually comes out.
		data, err := io.ReadAll(io.LimitReader(rc, MaxTotalBytes-total+1))
		rc.Close()
		if err != nil {
			return Skill{}, fault.Invalid("refused archive: entry %q: %v", f.Name, err)
		}
		total += int64(len(data))
		if total > MaxTotalBytes {
			return Skill{}, fault.Invalid("refused archive: more than %d MiB uncompressed", MaxTotalBytes>>20)
		}
		if rel == FileName {
			skillMD = data
		} else {
			files[rel] = data
		}
	}
	sk, err := Parse(skillMD)
	if err != nil {
		return Skill{}, fmt.Errorf("import skill: %w", err)
	}
	return s.write(ctx, agentID, sk.Name, skillMD, files, true)
}

// skillPrefix finds where SKILL.md is: "" at the root, or "top/" when every
// entry is inside one folder holding it.
func skillPrefix(entries []*zip.File) (string, error) {
	if len(entries) == 0 {
		return "", fault.Invalid("the archive is empty")
	}
	for _, f := range entries {
		if f.Name == FileName {
			return "", nil
		}
	}
	top, _, _ := strings.Cut(entries[0].Name, "/")
	prefix := top + "/"
	for _, f := range entries {
		if !strings.HasPrefix(f.Name, prefix) {
			return "", fault.Invalid("the archive has no SKILL.md at its root or in a single top folder")
		}
	}
	for _, f := range entries {
		if f.Name == prefix+FileName {
			return prefix, nil
		}
	}
	return "", fault.Invalid("the archive has no SKILL.md at its root or in a single top folder")
}

// ExportZip writes the skill's folder as a .zip with one top folder named
// after the skill, the layout ImportZip and other Agent Skills tools accept.
func (s *Service) ExportZip(ctx context.Context, agentID, name string, w io.Writer) error {
	dir, err := s.skillDir(agentID, name)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, FileName)); errors.Is(err, fs.ErrNotExist) {
		return fault.NotFound("no skill %q", name)
	}
	loaded, err := s.Load(ctx, agentID, name)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(w)
	for _, rel := range append([]string{FileName}, loaded.Files...) {
		data, err := s.ReadFile(ctx, agentID, name, rel)
		if err != nil {
			return fmt.Errorf("export skill %s: %w", name, err)
		}
		fw, err := zw.Create(name + "/" + rel)
		if err != nil {
			return fmt.Errorf("export skill %s: %w", name, err)
		}
		if _, err := io.Copy(fw, bytes.NewReader(data)); err != nil {
			return fmt.Errorf("export skill %s: %w", name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("export skill %s: %w", name, err)
	}
	return nil
}
