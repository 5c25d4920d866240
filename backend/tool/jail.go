package tool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Resolve maps p, a slash-separated path relative to root, to the real path
// it names inside root. It refuses what could reach outside: absolute paths,
// ".." that climbs above root, NUL bytes, and symlinks (anywhere along the
// existing part of the path, the last element included) whose target lies
// outside root or does not exist. The part of the path that does not exist
// yet is appended as given; it holds no ".." and no symlinks, since it does
// not exist.
//
// The returned path has every existing symlink resolved, so writing to it
// never follows a link out of root. root must exist.
func Resolve(root, p string) (string, error) {
	local, err := localPath(p)
	if err != nil {
		return "", err
	}
	realRoot, err := realDir(root)
	if err != nil {
		return "", err
	}
	// Find the longest prefix that exists; everything after it is new.
	existing, rest := filepath.Join(realRoot, local), ""
	for len(existing) > len(realRoot) {
		_, err := os.Lstat(existing)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", fmt.Errorf("check path %q: %w", p, err)
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = filepath.Dir(existing)
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", fault.Invalid("path %q goes through a symlink that cannot be followed (its target is missing, or it loops); use another path or delete the link", p)
	}
	if !within(realRoot, real) {
		return "", fault.Invalid("path %q goes through a symlink that points outside its folder; only files inside the folder can be used", p)
	}
	return filepath.Join(real, rest), nil
}

// localPath checks the shape of p — not empty, no NUL, not absolute, no ".."
// above its start — and returns it cleaned, in the OS's separators.
func localPath(p string) (string, error) {
	if p == "" {
		return "", fault.Invalid("%s", errPathArgumentText)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", fault.Invalid("path %q contains a NUL byte; remove it", p)
	}
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || filepath.VolumeName(p) != "" {
		return "", fault.Invalid("path %q is absolute; %s", p, pathHelp)
	}
	local := filepath.Clean(filepath.FromSlash(p))
	if !filepath.IsLocal(local) {
		return "", fault.Invalid("path %q climbs out of its folder with ..; %s", p, pathHelp)
	}
	return local, nil
}

// realDir is root made absolute with its symlinks resolved, so that
// containment checks compare like with like.
func realDir(root string) (string, error) {
	if root == "" {
		return "", fault.Invalid("no folder is configured for this agent")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("resolve folder %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("resolve folder %s: %w", root, err)
	}
	return real, nil
}

// within reports whether p is root or lies under it. Both must be clean.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// folder is one of the two roots an agent's paths can name.
type folder struct {
	root  string // absolute, symlinks resolved
	label string // "" for the agent's own folder, "shared/" for the shared one
}

// show turns a real path under f back into the path the model uses.
func (f folder) show(p string) string {
	rel, err := filepath.Rel(f.root, p)
	if err != nil || rel == "." {
		if f.label == "" {
			return "."
		}
		return sharedName
	}
	return f.label + filepath.ToSlash(rel)
}

// locate splits a model-given path into its folder and the path inside it,
// creating the folder if it is missing (a fresh agent has none yet).
func locate(env *Env, p string) (folder, string, error) {
	if strings.IndexByte(p, 0) < 0 && !strings.HasPrefix(p, "/") {
		p = path.Clean(p) // "./shared/x" and "a/../shared/x" name the shared folder too
	}
	root, label, rel := env.FilesDir, "", p
	if p == sharedName || strings.HasPrefix(p, sharedPrefix) {
		root, label, rel = env.SharedDir, sharedPrefix, strings.TrimPrefix(strings.TrimPrefix(p, sharedName), "/")
		if rel == "" {
			rel = "."
		}
		if root == "" {
			return folder{}, "", fault.Invalid("this workspace has no shared folder; use a path in your own folder")
		}
	}
	if root == "" {
		return folder{}, "", fault.Invalid("this agent has no folder configured")
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return folder{}, "", fmt.Errorf("create folder %s: %w", root, err)
	}
	real, err := realDir(root)
	if err != nil {
		return folder{}, "", err
	}
	return folder{root: real, label: label}, rel, nil
}

// resolvePath is locate then Resolve.
func resolvePath(env *Env, p string) (folder, string, error) {
	if p == "" {
		return folder{}, "", fault.Invalid("%s", errPathArgumentText)
	}
	f, rel, err := locate(env, p)
	if err != nil {
		return folder{}, "", err
	}
	full, err := Resolve(f.root, rel)
	return f, full, err
}
