package connector

// The stdio servers' sandbox: an agent's app server reaches its agent's
// folder, the shared folder, a private temp folder and the folders and
// files its own configuration names; the network as the agent's switch
// says.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/sandbox"
)

// sandboxedCommand is exec.Command(t.Command, t.Args...) confined for the
// agent's server, with its temp folder (remove it when the server ends);
// where commands cannot be confined here it is the plain command (the
// person installed the app) and tmp is "".
func (s *Service) sandboxedCommand(ctx context.Context, agentID string, t Transport) (cmd *exec.Cmd, env []string, tmp string, err error) {
	if ok, _ := sandbox.Available(); !ok {
		return exec.Command(t.Command, t.Args...), nil, "", nil
	}
	tmp, err = os.MkdirTemp("", "rerun-app-")
	if err != nil {
		return nil, nil, "", err
	}
	var own, shared, ws string
	if s.cfg.AgentsDir != "" {
		ws = filepath.Dir(s.cfg.AgentsDir)
		if d := filepath.Join(s.cfg.AgentsDir, agentID, "files"); isDir(d) {
			own = d
		}
		if d := filepath.Join(ws, "shared"); isDir(d) {
			shared = d
		}
	}
	named := namedPaths(ws, t)
	p := sandbox.Agent(ws, own, shared, tmp, named, s.network(ctx, agentID))
	if path, err := exec.LookPath(t.Command); err == nil && filepath.IsAbs(path) {
		p.RO = append(p.RO, path) // the program itself, wherever it is
	}
	for _, n := range named {
		if fi, err := os.Stat(n); err == nil && !fi.IsDir() {
			if root := projectRoot(n); root != "" && !slices.ContainsFunc(p.Private, func(d string) bool { return inside(root, d) || inside(d, root) }) {
				p.RO = append(p.RO, root) // a script's package, to load what it imports
			}
		}
	}
	home := own
	if home == "" {
		home = tmp
	}
	cmd, err = sandbox.Command(p, t.Command, t.Args...)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, nil, "", err
	}
	return cmd, []string{"HOME=" + home, "TMPDIR=" + tmp, "TMP=" + tmp, "TEMP=" + tmp}, tmp, nil
}

// namedPaths are the existing folders and files the server's arguments
// and env name by absolute path (the Filesystem app's folder), less any
// inside the workspace or, in the app's layout, the data directory.
func namedPaths(ws string, t Transport) []string {
	private := []string{}
	if ws != "" {
		private = append(private, ws)
		if filepath.Base(filepath.Dir(ws)) == "workspaces" {
			private = append(private, filepath.Dir(filepath.Dir(ws)))
		}
	}
	var out []string
	vals := slices.Clone(t.Args)
	for _, v := range t.Env {
		vals = append(vals, filepath.SplitList(v)...)
	}
	for _, v := range vals {
		if _, after, ok := strings.Cut(v, "="); ok && strings.HasPrefix(v, "-") {
			v = after // --root=/x
		}
		if !filepath.IsAbs(v) {
			continue
		}
		v = filepath.Clean(v)
		if _, err := os.Stat(v); err != nil || slices.Contains(out, v) {
			continue
		}
		if slices.ContainsFunc(private, func(p string) bool { return inside(v, p) }) {
			continue
		}
		out = append(out, v)
	}
	return out
}

func inside(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// network is the agent's network switch (on when the agent is unknown).
func (s *Service) network(ctx context.Context, agentID string) bool {
	on := true
	if s.db != nil {
		_ = s.db.QueryRowContext(ctx, `SELECT network FROM agents WHERE id = ?`, agentID).Scan(&on)
	}
	return on
}

// sandboxedEnv drops from env what points the server at the person's own
// folders, which it cannot write inside the sandbox; HOME and the temp
// folder come from the sandbox instead.
func sandboxedEnv(env []string) []string {
	drop := []string{"HOME", "TMPDIR", "TMP", "TEMP", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "npm_config_cache", "UV_CACHE_DIR"}
	return slices.DeleteFunc(env, func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.Contains(drop, k)
	})
}

// projectRoot is the folder of the package a script named by path belongs
// to: above the topmost node_modules, else the nearest folder with a
// package.json, pyproject.toml, go.mod or .git, else the script's own
// folder; "" when that would be the home folder or the root.
func projectRoot(path string) string {
	dir := filepath.Dir(path)
	root := dir
	if i := strings.Index(path, string(filepath.Separator)+"node_modules"+string(filepath.Separator)); i > 0 {
		root = path[:i]
	} else {
		for d := dir; filepath.Dir(d) != d; d = filepath.Dir(d) {
			if slices.ContainsFunc([]string{"package.json", "pyproject.toml", "go.mod", ".git"}, func(m string) bool {
				_, err := os.Stat(filepath.Join(d, m))
				return err == nil
			}) {
				root = d
				break
			}
		}
	}
	home, _ := os.UserHomeDir()
	if filepath.Dir(root) == root || (home != "" && inside(home, root)) {
		return ""
	}
	return root
}
