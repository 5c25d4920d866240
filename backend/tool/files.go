package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
	"github.com/rerun-build/rerun-desktop/backend/secret"
)

// Limits of the files family.
const (
	MaxReadBytes  = 256 << 10 // read_file returns at most this much per call
	MaxWriteBytes = 1 << 20   // write_file / append_file take at most this much

	maxListEntries      = 1000     // list_files stops here
	maxListOutput       = 64 << 10 // bytes of list_files output
	defaultSearchHits   = 100
	maxSearchHits       = 500
	maxSearchFileBytes  = 1 << 20 // larger files are skipped by content search
	maxSearchFiles      = 20000   // files visited by one search
	maxSearchLineBytes  = 200     // a matching line is cut to this
	maxSearchOutput     = 64 << 10
	sharedPrefix        = "shared/"
	sharedName          = "shared"
	binarySniffBytes    = 8 << 10
	pathHelp            = "paths are relative to your own folder (like notes/todo.md), or start with shared/ for the workspace's shared folder"
	errPathArgumentText = "path is empty; give a file path: " + pathHelp
)

func filesTools() []Tool {
	return []Tool{
		{
			Name:   "read_file",
			Family: "files",
			Description: "Read a text file. " + capitalize(pathHelp) + ". Returns at most 256 KiB per call; " +
				"a longer file ends with a [truncated: N more bytes] note and the offset to continue from.",
			Schema: json.RawMessage(`{"type":"object","properties":{` +
				`"path":{"type":"string","description":"File path: relative to your folder, or shared/… for the shared folder."},` +
				`"offset":{"type":"integer","minimum":0,"description":"Byte offset to start reading at (default 0)."}` +
				`},"required":["path"],"additionalProperties":false}`),
			Run: readFile,
		},
		{
			Name:   "write_file",
			Family: "files",
			Description: "Create or replace a text file with the given content (at most 1 MiB); missing parent folders are created. " +
				capitalize(pathHelp) + ".",
			Schema: json.RawMessage(`{"type":"object","properties":{` +
				`"path":{"type":"string","description":"File path: relative to your folder, or shared/… for the shared folder."},` +
				`"content":{"type":"string","description":"The whole new content of the file."}` +
				`},"required":["path","content"],"additionalProperties":false}`),
			Run:     writeFile,
			Acts:    always,
			Preview: previewWrite("write_file"),
		},
		{
			Name:   "append_file",
			Family: "files",
			Description: "Append text to the end of a file, creating it (and its folders) if missing. At most 1 MiB per call. " +
				capitalize(pathHelp) + ".",
			Schema: json.RawMessage(`{"type":"object","properties":{` +
				`"path":{"type":"string","description":"File path: relative to your folder, or shared/… for the shared folder."},` +
				`"content":{"type":"string","description":"Text to add at the end; include a trailing newline if you want one."}` +
				`},"required":["path","content"],"additionalProperties":false}`),
			Run:     appendFile,
			Acts:    always,
			Preview: previewWrite("append_file"),
		},
		{
			Name:   "list_files",
			Family: "files",
			Description: "List a folder: one line per entry with type (file, dir, symlink), size in bytes, modification time (UTC) and path. " +
				capitalize(pathHelp) + `; "." is your folder, "shared" the shared folder. At most 1000 entries.`,
			Schema: json.RawMessage(`{"type":"object","properties":{` +
				`"path":{"type":"string","description":"Folder to list (default \".\", your own folder; \"shared\" for the shared folder)."},` +
				`"recursive":{"type":"boolean","description":"Also list everything in subfolders (default false)."}` +
				`},"required":[],"additionalProperties":false}`),
			Run: listFiles,
		},
		{
			Name:   "search_files",
			Family: "files",
			Description: "Find files under a folder by name (a glob such as *.md, matched against the file name) and/or by content " +
				"(a substring, or a Go regular expression with regexp true). Content matches come back as path:line: text. " +
				"Files over 1 MiB and binary files are not searched by content. " + capitalize(pathHelp) + ".",
			Schema: json.RawMessage(`{"type":"object","properties":{` +
				`"path":{"type":"string","description":"Folder to search (default \".\", your own folder; \"shared\" for the shared folder)."},` +
				`"name":{"type":"string","description":"Glob for the file name, e.g. *.csv or report-??.md."},` +
				`"content":{"type":"string","description":"Text to look for inside files."},` +
				`"regexp":{"type":"boolean","description":"Treat content as a regular expression (Go RE2 syntax). Default false."},` +
				`"ignore_case":{"type":"boolean","description":"Match name and content without regard to case. Default false."},` +
				`"max_results":{"type":"integer","minimum":1,"maximum":500,"description":"Stop after this many results (default 100)."}` +
				`},"required":[],"additionalProperties":false}`),
			Run: searchFiles,
		},
		{
			Name:   "delete_file",
			Family: "files",
			Description: "Delete a file, a symlink (not what it points to) or an empty folder; set recursive to delete a folder with everything in it. " +
				capitalize(pathHelp) + ".",
			Schema: json.RawMessage(`{"type":"object","properties":{` +
				`"path":{"type":"string","description":"Path to delete: relative to your folder, or shared/… for the shared folder."},` +
				`"recursive":{"type":"boolean","description":"Delete a folder and everything in it (default false)."}` +
				`},"required":["path"],"additionalProperties":false}`),
			Run:  deleteFile,
			Acts: always,
			Preview: func(_ *Env, input json.RawMessage) (string, string, string) {
				p := argsOf(input).str("path")
				return "Delete " + p, "target", p
			},
		},
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func readFile(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
	var in struct {
		Path   string `json:"path"`
		Offset int64  `json:"offset"`
	}
	if err := jsonarg.Decode(input, &in); err != nil {
		return "", err
	}
	if in.Offset < 0 {
		return "", fault.Invalid("offset %d is negative; use 0 or more", in.Offset)
	}
	_, full, err := resolvePath(env, in.Path)
	if err != nil {
		return "", err
	}
	info, err := os.Stat(full)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return "", fault.NotFound("file %q does not exist; use list_files or search_files to find it", in.Path)
	}
	if err != nil {
		return "", fmt.Errorf("stat %q: %w", in.Path, err)
	}
	if info.IsDir() {
		return "", fault.Invalid("%q is a folder, not a file; use list_files to see what it holds", in.Path)
	}
	if !info.Mode().IsRegular() {
		// Opening a FIFO or a device could block the run forever.
		return "", fault.Invalid("%q is not a regular file (%s); read_file reads files only", in.Path, info.Mode().Type())
	}
	f, err := os.Open(full)
	if err != nil {
		return "", fmt.Errorf("open %q: %w", in.Path, err)
	}
	defer f.Close()
	size := info.Size()
	if in.Offset > size {
		return "", fault.Invalid("offset %d is past the end of %q (%d bytes)", in.Offset, in.Path, size)
	}
	buf := make([]byte, MaxReadBytes)
	n, err := f.ReadAt(buf, in.Offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read %q: %w", in.Path, err)
	}
	data := buf[:n]
	if isBinary(data) {
		return fmt.Sprintf("[binary file: %d bytes; read_file shows text only]", size), nil
	}
	rest := size - in.Offset - int64(n)
	if rest > 0 {
		// End on a character boundary so the next call starts on one.
		cut := len(data)
		for i := 1; i < utf8.UTFMax && i <= len(data); i++ {
			if utf8.RuneStart(data[len(data)-i]) {
				if !utf8.FullRune(data[len(data)-i:]) {
					cut = len(data) - i
				}
				break
			}
		}
		rest += int64(len(data) - cut)
		data = data[:cut]
		return fmt.Sprintf("%s\n[truncated: %d more bytes]\n(call read_file with offset %d to read on)", maskPage(f, data, in.Offset, env.redactor()), rest, in.Offset+int64(len(data))), nil
	}
	return maskPage(f, data, in.Offset, env.redactor()), nil
}

// maskPage masks data, read at offset of f, with the bytes around it in
// view: a value the page's start or end cuts in two is masked on both pages
// (secret.Redactor.RedactRange).
func maskPage(f *os.File, data []byte, offset int64, r *secret.Redactor) string {
	over := int64(maskContext(r))
	if over == 0 {
		return string(data)
	}
	lo := max(0, offset-over)
	win := make([]byte, offset-lo+int64(len(data))+over)
	n, _ := f.ReadAt(win, lo)
	if n < int(offset-lo)+len(data) {
		return r.Redact(string(data)) // the file shrank meanwhile
	}
	return r.RedactRange(string(win[:n]), int(offset-lo), int(offset-lo)+len(data))
}

// isBinary guesses whether data is not text: a NUL byte, or bytes that are
// not UTF-8 (allowing a character cut at the end).
func isBinary(data []byte) bool {
	sniff := data
	if len(sniff) > binarySniffBytes {
		sniff = sniff[:binarySniffBytes]
	}
	if bytes.IndexByte(sniff, 0) >= 0 {
		return true
	}
	if utf8.Valid(sniff) {
		return false
	}
	// Tolerate one character cut by the sniff window or the read cap.
	for i := 1; i < utf8.UTFMax && i <= len(sniff); i++ {
		if utf8.Valid(sniff[:len(sniff)-i]) && !utf8.FullRune(sniff[len(sniff)-i:]) {
			return false
		}
	}
	return true
}

// decodeContent reads the {path, content} input of write_file and
// append_file; missing and tooBig finish the refusals in each tool's words.
func decodeContent(input json.RawMessage, missing, tooBig string) (string, string, error) {
	var in struct {
		Path    string  `json:"path"`
		Content *string `json:"content"`
	}
	if err := jsonarg.Decode(input, &in); err != nil {
		return "", "", err
	}
	if in.Content == nil {
		return "", "", fault.Invalid("content is missing; %s", missing)
	}
	if len(*in.Content) > MaxWriteBytes {
		return "", "", fault.Invalid("content is %d bytes; %s", len(*in.Content), tooBig)
	}
	return in.Path, *in.Content, nil
}

func writeFile(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
	path, content, err := decodeContent(input,
		"give the whole new text of the file (an empty string makes an empty file)",
		fmt.Sprintf("write_file takes at most %d — write the first part, then add the rest with append_file", MaxWriteBytes))
	if err != nil {
		return "", err
	}
	f, full, err := resolvePath(env, path)
	if err != nil {
		return "", err
	}
	if full == f.root {
		return "", fault.Invalid("%q is the folder itself; give a file path inside it", path)
	}
	existed := false
	if info, err := os.Stat(full); err == nil {
		if info.IsDir() {
			return "", fault.Invalid("%q is a folder; give a file path", path)
		}
		existed = true
	}
	dir := filepath.Dir(full)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", mkdirError(path, err)
	}
	// Write a temporary file and rename it over the target, so a reader never
	// sees half a file and a crash never leaves one.
	tmp, err := os.CreateTemp(dir, ".write-*")
	if err != nil {
		return "", fmt.Errorf("write %q: %w", path, err)
	}
	_, werr := tmp.WriteString(content)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o644)); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("write %q: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), full); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("write %q: %w", path, err)
	}
	verb := "created"
	if existed {
		verb = "replaced"
	}
	return fmt.Sprintf("%s %s (%d bytes)", verb, f.show(full), len(content)), nil
}

func appendFile(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
	path, content, err := decodeContent(input,
		"give the text to add at the end of the file",
		fmt.Sprintf("append_file takes at most %d per call — split it over several calls", MaxWriteBytes))
	if err != nil {
		return "", err
	}
	f, full, err := resolvePath(env, path)
	if err != nil {
		return "", err
	}
	if info, err := os.Stat(full); err == nil && info.IsDir() {
		return "", fault.Invalid("%q is a folder; give a file path", path)
	} else if err == nil && !info.Mode().IsRegular() {
		return "", fault.Invalid("%q is not a regular file (%s); append_file appends to files only", path, info.Mode().Type())
	}
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return "", mkdirError(path, err)
	}
	out, err := os.OpenFile(full, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return "", fmt.Errorf("open %q: %w", path, err)
	}
	_, werr := out.WriteString(content)
	info, serr := out.Stat()
	if err := errors.Join(werr, serr, out.Close()); err != nil {
		return "", fmt.Errorf("append to %q: %w", path, err)
	}
	return fmt.Sprintf("appended %d bytes to %s (now %d bytes)", len(content), f.show(full), info.Size()), nil
}

func mkdirError(p string, err error) error {
	if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrExist) {
		return fault.Invalid("a part of %q is a file, not a folder; choose another path", p)
	}
	return fmt.Errorf("create folders for %q: %w", p, err)
}

func deleteFile(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
	var in struct {
		Path      string `json:"path"`
		Recursive bool   `json:"recursive"`
	}
	if err := jsonarg.Decode(input, &in); err != nil {
		return "", err
	}
	if in.Path == "" {
		return "", fault.Invalid("%s", errPathArgumentText)
	}
	f, rel, err := locate(env, in.Path)
	if err != nil {
		return "", err
	}
	local, err := localPath(rel)
	if err != nil {
		return "", err
	}
	if local == "." {
		return "", fault.Invalid("refusing to delete the whole folder %q; delete the files inside it instead", in.Path)
	}
	// Resolve the parent, not the path itself: deleting a symlink must remove
	// the link, never what it points to.
	parent, err := Resolve(f.root, filepath.ToSlash(filepath.Dir(local)))
	if err != nil {
		return "", err
	}
	target := filepath.Join(parent, filepath.Base(local))
	info, err := os.Lstat(target)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return "", fault.NotFound("%q does not exist; use list_files to see what is there", in.Path)
	}
	if err != nil {
		return "", fmt.Errorf("stat %q: %w", in.Path, err)
	}
	if info.IsDir() && in.Recursive {
		if err := os.RemoveAll(target); err != nil {
			return "", fmt.Errorf("delete %q: %w", in.Path, err)
		}
		return fmt.Sprintf("deleted folder %s and everything in it", f.show(target)), nil
	}
	if err := os.Remove(target); err != nil {
		if info.IsDir() {
			return "", fault.Invalid("folder %q is not empty; set recursive true to delete it with everything in it", in.Path)
		}
		return "", fmt.Errorf("delete %q: %w", in.Path, err)
	}
	kind := "file"
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		kind = "symlink"
	case info.IsDir():
		kind = "folder"
	}
	return fmt.Sprintf("deleted %s %s", kind, f.show(target)), nil
}

// previewWrite shows a write_file or append_file call as the unified diff
// of the file it changes.
func previewWrite(name string) func(*Env, json.RawMessage) (string, string, string) {
	return func(env *Env, input json.RawMessage) (string, string, string) {
		in := argsOf(input)
		p, content := in.str("path"), in.str("content")
		var old []byte
		if _, full, err := resolvePath(env, p); err == nil {
			old, _ = os.ReadFile(full)
		}
		next, verb := content, "Write"
		if name == "append_file" {
			next, verb = string(old)+content, "Append to"
		}
		return verb + " " + p, "diff", UnifiedDiff(p, string(old), next)
	}
}
