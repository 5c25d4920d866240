package tool

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
)

func listFiles(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
	var in struct {
		Path      string `json:"path"`
		Recursive bool   `json:"recursive"`
	}
	if err := jsonarg.Decode(input, &in); err != nil {
		return "", err
	}
	if in.Path == "" {
		in.Path = "."
	}
	f, full, err := resolvePath(env, in.Path)
	if err != nil {
		return "", err
	}
	info, err := os.Stat(full)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fault.NotFound("folder %q does not exist; list its parent to see what is there", in.Path)
	}
	if err != nil {
		return "", fmt.Errorf("stat %q: %w", in.Path, err)
	}
	var b strings.Builder
	if !info.IsDir() {
		writeEntry(&b, f, full, info)
		return b.String(), nil
	}
	count, more := 0, false
	err = filepath.WalkDir(full, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == full {
				return err
			}
			return nil // an unreadable subfolder is left out, not fatal
		}
		if p == full {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if count == maxListEntries {
			more = true
			return filepath.SkipAll
		}
		info, err := d.Info()
		if err != nil {
			return nil // removed while listing
		}
		writeEntry(&b, f, p, info)
		count++
		if d.IsDir() && !in.Recursive {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("list %q: %w", in.Path, err)
	}
	if count == 0 {
		return fmt.Sprintf("%s is empty", f.show(full)), nil
	}
	out := env.clip(b.String(), maxListOutput)
	if more {
		out += fmt.Sprintf("\n[stopped at %d entries; list a subfolder, or search_files to narrow down]", maxListEntries)
	}
	return out, nil
}

// writeEntry writes one list_files line: type, size, mtime, path.
func writeEntry(b *strings.Builder, f folder, p string, info fs.FileInfo) {
	kind, size, name := "file", fmt.Sprint(info.Size()), f.show(p)
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		kind, size = "symlink", "-"
		if target, err := os.Readlink(p); err == nil {
			name += " -> " + filepath.ToSlash(target)
		}
	case info.IsDir():
		kind, size, name = "dir", "-", name+"/"
	}
	fmt.Fprintf(b, "%-7s %10s  %s  %s\n", kind, size, info.ModTime().UTC().Format(time.RFC3339), name)
}

func searchFiles(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
	var in struct {
		Path       string `json:"path"`
		Name       string `json:"name"`
		Content    string `json:"content"`
		Regexp     bool   `json:"regexp"`
		IgnoreCase bool   `json:"ignore_case"`
		MaxResults int    `json:"max_results"`
	}
	if err := jsonarg.Decode(input, &in); err != nil {
		return "", err
	}
	if in.Name == "" && in.Content == "" {
		return "", fault.Invalid("give name (a glob like *.md), content (text to find), or both")
	}
	switch {
	case in.MaxResults == 0:
		in.MaxResults = defaultSearchHits
	case in.MaxResults < 0 || in.MaxResults > maxSearchHits:
		return "", fault.Invalid("max_results %d is out of range; use 1 to %d", in.MaxResults, maxSearchHits)
	}
	if in.Path == "" {
		in.Path = "."
	}
	name := in.Name
	if in.IgnoreCase {
		name = strings.ToLower(name)
	}
	if _, err := path.Match(name, ""); err != nil {
		return "", fault.Invalid("name %q is not a valid glob (%v); use * ? and [a-z] only", in.Name, err)
	}
	var match func(line string) bool
	switch {
	case in.Content == "":
	case in.Regexp:
		expr := in.Content
		if in.IgnoreCase {
			expr = "(?i)" + expr
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return "", fault.Invalid("content is not a valid regular expression (%v); fix it, or set regexp false to search for plain text", err)
		}
		match = re.MatchString
	case in.IgnoreCase:
		needle := strings.ToLower(in.Content)
		match = func(line string) bool { return strings.Contains(strings.ToLower(line), needle) }
	default:
		match = func(line string) bool { return strings.Contains(line, in.Content) }
	}

	f, full, err := resolvePath(env, in.Path)
	if err != nil {
		return "", err
	}
	if info, err := os.Stat(full); err != nil || !info.IsDir() {
		return "", fault.NotFound("folder %q does not exist; search a folder (\".\" is your own, \"shared\" the shared one)", in.Path)
	}
	var b strings.Builder
	hits, visited, skipped, stopped := 0, 0, 0, false
	err = filepath.WalkDir(full, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		visited++
		if visited > maxSearchFiles {
			stopped = true
			return filepath.SkipAll
		}
		base := d.Name()
		if in.IgnoreCase {
			base = strings.ToLower(base)
		}
		if name != "" {
			if ok, _ := path.Match(name, base); !ok {
				return nil
			}
		}
		if match == nil {
			fmt.Fprintln(&b, f.show(p))
			hits++
		} else {
			n, big := grepFile(p, f.show(p), match, in.MaxResults-hits, &b)
			hits += n
			if big {
				skipped++
			}
		}
		if hits >= in.MaxResults {
			stopped = true
			return filepath.SkipAll
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("search %q: %w", in.Path, err)
	}
	if hits == 0 {
		b.WriteString("no matches")
	}
	out := env.clip(b.String(), maxSearchOutput)
	if stopped {
		out += fmt.Sprintf("\n[stopped after %d results or %d files; narrow the search with path or name]", in.MaxResults, maxSearchFiles)
	}
	if skipped > 0 {
		out += fmt.Sprintf("\n(%d files over 1 MiB were not searched by content)", skipped)
	}
	return out, nil
}

// grepFile writes up to limit "path:line: text" matches of one file to b. It
// reports how many it wrote and whether the file was too big to search.
func grepFile(p, shown string, match func(string) bool, limit int, b *strings.Builder) (int, bool) {
	file, err := os.Open(p)
	if err != nil {
		return 0, false
	}
	defer file.Close()
	if info, err := file.Stat(); err != nil || info.Size() > maxSearchFileBytes {
		return 0, err == nil
	}
	r := bufio.NewReader(file)
	head, _ := r.Peek(binarySniffBytes)
	if isBinary(head) {
		return 0, false
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxSearchFileBytes+1)
	n := 0
	for line := 1; sc.Scan() && n < limit; line++ {
		text := sc.Text()
		if !match(text) {
			continue
		}
		text = strings.TrimSpace(text)
		if len(text) > maxSearchLineBytes {
			text = strings.ToValidUTF8(text[:maxSearchLineBytes], "") + "…"
		}
		fmt.Fprintf(b, "%s:%d: %s\n", shown, line, text)
		n++
	}
	return n, false
}
