package template

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/skill"
)

// Limits of a package (and of a template in the library, so that every
// template exports into a package that imports).
const (
	MaxPackageBytes  = 20 << 20 // the .rerun-template file
	MaxUnpackedBytes = 20 << 20 // everything in it, uncompressed
	MaxEntryBytes    = 10 << 20 // one file in it
	MaxFiles         = 1000     // files in it, template.json and soul.md included
	MaxManifestBytes = 1 << 20  // template.json
	maxPathLen       = 512      // bytes of one path in it
)

// The names a package is made of.
const (
	manifestName = "template.json"
	soulName     = "soul.md"
	skillsDir    = "skills"
	filesDir     = "files"
)

// Extension is the file name extension of a package.
const Extension = ".rerun-template"

// Package is a template's whole content: the manifest (template.json), the
// soul, the skills' folders and the files, as a .rerun-template file holds
// them.
type Package struct {
	Manifest
	Soul string
	// Skills are the skills' folders: skill name → path in the folder →
	// content, SKILL.md included.
	Skills map[string]map[string][]byte
	// Files are the files under files/: path → content.
	Files map[string][]byte
}

// ReadPackage reads and checks a .rerun-template file, whole: a package
// with a path leaving it (..), an absolute path, a link or anything that
// is not a plain file, an entry or a total over the limits, more than
// MaxFiles files, a template.json that is not valid JSON or does not follow
// the schema, memories, run history, a variable's value, a token or an API
// key is refused with an error saying what is wrong (fault.ErrInvalid).
func ReadPackage(data []byte) (*Package, error) {
	if len(data) > MaxPackageBytes {
		return nil, fault.Invalid("the package is %.1f MiB; a .rerun-template file holds at most %d MiB", mib(len(data)), MaxPackageBytes>>20)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fault.Invalid("not a .rerun-template file: it is not a readable zip archive (%v)", err)
	}
	if len(zr.File) > 2*MaxFiles { // folders included; checked again per file below
		return nil, fault.Invalid("refused package: %d entries; a template holds at most %d files", len(zr.File), MaxFiles)
	}
	// First every entry's name, kind and declared size, so nothing is
	// decompressed from an archive that will be refused anyway.
	var entries []*zip.File
	seen := map[string]bool{}
	var declared uint64
	for _, f := range zr.File {
		name, err := entryName(f.Name)
		if err != nil {
			return nil, err
		}
		if f.Mode()&fs.ModeSymlink != 0 {
			return nil, fault.Invalid("refused package: entry %q is a symbolic link; a package holds plain files only", short(f.Name))
		}
		if f.FileInfo().IsDir() {
			if err := checkFolder(name); err != nil {
				return nil, err
			}
			continue
		}
		if !f.Mode().IsRegular() {
			return nil, fault.Invalid("refused package: entry %q is not a plain file", short(f.Name))
		}
		if ignored(name) {
			continue
		}
		if seen[name] {
			return nil, fault.Invalid("refused package: entry %q appears twice", short(name))
		}
		seen[name] = true
		if _, _, err := place(name); err != nil {
			return nil, err
		}
		if len(entries)+1 > MaxFiles {
			return nil, fault.Invalid("refused package: more than %d files; a template is a small set of files", MaxFiles)
		}
		if f.UncompressedSize64 > MaxEntryBytes {
			return nil, fault.Invalid("refused package: %s is %.1f MiB; one file holds at most %d MiB", name, mib(int(min(f.UncompressedSize64, 1<<40))), MaxEntryBytes>>20)
		}
		if declared += f.UncompressedSize64; declared > MaxUnpackedBytes {
			return nil, fault.Invalid("refused package: its files hold more than %d MiB uncompressed", MaxUnpackedBytes>>20)
		}
		entries = append(entries, f)
	}
	p := &Package{Skills: map[string]map[string][]byte{}, Files: map[string][]byte{}}
	var manifest []byte
	found := false
	var total int
	for _, f := range entries {
		name, _ := entryName(f.Name)
		rc, err := f.Open()
		if err != nil {
			return nil, fault.Invalid("refused package: entry %q: %v", short(name), err)
		}
		// Declared sizes can lie: count what actually comes out.
		b, err := io.ReadAll(io.LimitReader(rc, MaxEntryBytes+1))
		rc.Close()
		if err != nil {
			return nil, fault.Invalid("refused package: entry %q cannot be read: %v", short(name), err)
		}
		if len(b) > MaxEntryBytes {
			return nil, fault.Invalid("refused package: %s is larger than %d MiB; one file holds at most that", name, MaxEntryBytes>>20)
		}
		if total += len(b); total > MaxUnpackedBytes {
			return nil, fault.Invalid("refused package: its files hold more than %d MiB uncompressed", MaxUnpackedBytes>>20)
		}
		kind, rel, _ := place(name)
		switch kind {
		case manifestName:
			manifest, found = b, true
		case soulName:
			if !utf8.Valid(b) {
				return nil, fault.Invalid("soul.md is not UTF-8 text")
			}
			p.Soul = string(b)
		case skillsDir:
			skillName, file, _ := strings.Cut(rel, "/")
			if p.Skills[skillName] == nil {
				p.Skills[skillName] = map[string][]byte{}
			}
			p.Skills[skillName][file] = b
		case filesDir:
			p.Files[rel] = b
		}
	}
	if !found {
		return nil, fault.Invalid("the package has no template.json; a .rerun-template file holds template.json, soul.md, skills/ and files/ at its root")
	}
	if p.Manifest, err = parseManifest(manifest); err != nil {
		return nil, err
	}
	if err := p.check(nil); err != nil {
		return nil, err
	}
	return p, nil
}

func mib(n int) float64 { return float64(n) / (1 << 20) }

// ignored are entries zip tools add that mean nothing.
func ignored(name string) bool {
	base := path.Base(name)
	return strings.HasPrefix(name, "__MACOSX/") || base == ".DS_Store" || base == "Thumbs.db"
}

// entryName checks an archive entry's name and returns it clean, without a
// folder's trailing slash. Backslashes count as separators: an archive made
// on Windows may use them, and ..\ must not slip through.
func entryName(raw string) (string, error) {
	name := strings.TrimSuffix(strings.ReplaceAll(raw, "\\", "/"), "/")
	if problem := pathProblem(name); problem != "" {
		return "", fault.Invalid("refused package: entry %q %s", short(raw), problem)
	}
	return name, nil
}

// short cuts a path for a message.
func short(p string) string {
	if len(p) > 60 {
		return p[:60] + "…"
	}
	return p
}

// pathProblem says what is wrong with a path inside a package or one of its
// folders, "" when nothing: it must be relative, slash-separated, without
// "..", empty or dot parts or control characters.
func pathProblem(p string) string {
	switch {
	case p == "":
		return "is empty; give a relative path such as notes/intro.md"
	case strings.HasPrefix(p, "/") || (len(p) > 1 && p[1] == ':') || filepath.IsAbs(p) || filepath.VolumeName(p) != "":
		return "is an absolute path; paths are relative to their folder, e.g. notes/intro.md"
	case strings.Contains(p, "\\"):
		return "uses \\; separate folders with /"
	case len(p) > maxPathLen:
		return fmt.Sprintf("is longer than %d bytes", maxPathLen)
	case !utf8.ValidString(p) || strings.IndexFunc(p, unicode.IsControl) >= 0:
		return "has a control character or invalid text"
	}
	for _, part := range strings.Split(p, "/") {
		switch part {
		case "..":
			return "points outside its folder (..)"
		case "", ".":
			return "is not a clean path: no empty or . parts"
		}
	}
	return ""
}

// forbidden says what a top-level name stands for when a template may never
// carry it.
func forbidden(top string) (string, bool) {
	base := strings.ToLower(strings.TrimSuffix(top, path.Ext(top)))
	what, ok := forbiddenKeys[base]
	return what, ok
}

// checkFolder checks a folder entry: one of the package's own, or a part of
// a path inside skills/ or files/.
func checkFolder(name string) error {
	top, rest, _ := strings.Cut(name, "/")
	if what, bad := forbidden(top); bad {
		return fault.Invalid("refused package: it holds %s (%s/); a template never carries %s", what, top, what)
	}
	switch top {
	case skillsDir:
		if rest != "" {
			skillName, _, _ := strings.Cut(rest, "/")
			if err := skill.CheckName(skillName); err != nil {
				return fault.Invalid("refused package: folder %q: %s", name, fault.Message(err))
			}
		}
		return nil
	case filesDir:
		return nil
	}
	return fault.Invalid("refused package: unexpected folder %q; a package holds template.json, soul.md, skills/<name>/… and files/… only", name)
}

// place says where a file entry belongs: template.json, soul.md, a skill's
// folder (rel "<skill>/<path>") or files/ (rel the path under it).
func place(name string) (kind, rel string, err error) {
	switch name {
	case manifestName, soulName:
		return name, "", nil
	}
	top, rest, nested := strings.Cut(name, "/")
	if what, bad := forbidden(top); bad {
		return "", "", fault.Invalid("refused package: it holds %s (%s); a template never carries %s", what, name, what)
	}
	switch {
	case top == skillsDir && nested:
		skillName, file, ok := strings.Cut(rest, "/")
		if !ok {
			return "", "", fault.Invalid("refused package: %s is a file where a skill's folder belongs (skills/<name>/SKILL.md)", name)
		}
		if err := skill.CheckName(skillName); err != nil {
			return "", "", fault.Invalid("refused package: %s: %s", name, fault.Message(err))
		}
		return skillsDir, skillName + "/" + file, nil
	case top == filesDir && nested:
		return filesDir, rest, nil
	}
	return "", "", fault.Invalid("refused package: unexpected entry %q; a package holds template.json, soul.md, skills/<name>/… and files/… only", name)
}

// parseManifest reads template.json: JSON, nothing a template never
// carries, the schema, then the manifest's own checks.
func parseManifest(data []byte) (Manifest, error) {
	if len(data) > MaxManifestBytes {
		return Manifest{}, fault.Invalid("template.json is %d KiB; it holds at most %d KiB", len(data)>>10, MaxManifestBytes>>10)
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return Manifest{}, jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Manifest{}, fault.Invalid("template.json is not valid JSON: it has data after its object")
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return Manifest{}, fault.Invalid("template.json must hold one JSON object (the template's fields), not a JSON %s", kindOf(doc))
	}
	if err := checkManifestDoc(doc); err != nil {
		return Manifest{}, err
	}
	if v, ok := obj["schema_version"].(json.Number); ok && v.String() != fmt.Sprint(SchemaVersion) {
		return Manifest{}, fault.Invalid("template.json has schema_version %s; this app reads version %d (a newer app may read this package)", v, SchemaVersion)
	}
	if err := validateSchema(doc); err != nil {
		return Manifest{}, err
	}
	var m Manifest
	dec = json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, fault.Invalid("template.json: %v", err)
	}
	return m, nil
}

func jsonError(err error) error {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return fault.Invalid("template.json is not valid JSON (at byte %d): %v", syn.Offset, syn)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fault.Invalid("template.json is not valid JSON: it is empty or ends in the middle of a value")
	}
	return fault.Invalid("template.json is not valid JSON: %v", err)
}

func kindOf(v any) string {
	switch v.(type) {
	case []any:
		return "list"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	}
	return "null"
}

// cleanPath checks a path inside files/ or a skill's folder (see
// pathProblem).
func cleanPath(p string) (string, error) {
	if problem := pathProblem(p); problem != "" {
		return "", fault.Invalid("path %q %s", short(p), problem)
	}
	return p, nil
}

// check validates the whole content: the manifest (see Manifest.check),
// the soul, each skill (a parseable SKILL.md naming its folder), the paths,
// the limits, and that no text holds a credential.
func (p *Package) check(catalog *connector.Catalog) error {
	if err := p.Manifest.check(catalog); err != nil {
		return err
	}
	if err := checkManifestValues(p.Manifest); err != nil {
		return err
	}
	if !utf8.ValidString(p.Soul) {
		return fault.Invalid("soul is not valid UTF-8 text")
	}
	if len(p.Soul) > agent.MaxSoulLen {
		return fault.Invalid("soul is %d KiB; keep it under %d KiB", len(p.Soul)>>10, agent.MaxSoulLen>>10)
	}
	if err := checkText("soul (soul.md)", p.Soul); err != nil {
		return err
	}
	files, total := 2, len(p.Soul) // template.json and soul.md
	for _, name := range sortedNames(p.Skills) {
		folder := p.Skills[name]
		if err := skill.CheckName(name); err != nil {
			return fault.Invalid("skills: %s", fault.Message(err))
		}
		md, ok := folder[skill.FileName]
		if !ok {
			return fault.Invalid("skill %q has no SKILL.md; every skill folder starts with one", name)
		}
		sk, err := skill.Parse(md)
		if err != nil {
			return fault.Invalid("skills/%s/SKILL.md: %s", name, fault.Message(err))
		}
		if sk.Name != name {
			return fault.Invalid("skills/%s/SKILL.md names the skill %q; make the folder and the name the same", name, sk.Name)
		}
		for rel, data := range folder {
			if _, err := cleanPath(rel); err != nil {
				return fault.Invalid("skills/%s: %s", name, fault.Message(err))
			}
			if err := checkText("skills/"+name+"/"+rel, string(data)); err != nil {
				return err
			}
			files, total = files+1, total+len(data)
			if len(data) > MaxEntryBytes {
				return fault.Invalid("skills/%s/%s is %.1f MiB; one file holds at most %d MiB", name, rel, mib(len(data)), MaxEntryBytes>>20)
			}
		}
	}
	for rel, data := range p.Files {
		if _, err := cleanPath(rel); err != nil {
			return fault.Invalid("files: %s", fault.Message(err))
		}
		if err := checkText("files/"+rel, string(data)); err != nil {
			return err
		}
		files, total = files+1, total+len(data)
		if len(data) > MaxEntryBytes {
			return fault.Invalid("files/%s is %.1f MiB; one file holds at most %d MiB", rel, mib(len(data)), MaxEntryBytes>>20)
		}
	}
	if files > MaxFiles {
		return fault.Invalid("the template has %d files; it holds at most %d", files, MaxFiles)
	}
	for name, folder := range p.Skills {
		if err := fileOrFolder("skills/"+name+"/", folder); err != nil {
			return err
		}
	}
	if err := fileOrFolder("files/", p.Files); err != nil {
		return err
	}
	if total > MaxUnpackedBytes {
		return fault.Invalid("the template holds %.1f MiB; at most %d MiB fit in a package: remove large files", mib(total), MaxUnpackedBytes>>20)
	}
	return nil
}

// fileOrFolder refuses a path that is also the folder of another path:
// no folder can hold both.
func fileOrFolder[V any](prefix string, files map[string]V) error {
	for rel := range files {
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			if _, ok := files[d]; ok {
				return fault.Invalid("%s%s is both a file and a folder (of %s); rename one", prefix, d, rel)
			}
		}
	}
	return nil
}

// ready is what submitting asks beyond a valid template: what a person
// browsing the library needs to see.
func (p *Package) ready() error {
	switch {
	case strings.TrimSpace(p.Description) == "":
		return fault.Invalid("description is empty; say what the agent does and for whom (update_template description) before submitting")
	case strings.TrimSpace(p.Soul) == "":
		return fault.Invalid("soul is empty; write who the agent is and how it works (update_template soul) before submitting")
	}
	return nil
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// skillList describes the skills, sorted by name.
func (p *Package) skillList() []Skill {
	out := []Skill{}
	for _, name := range sortedNames(p.Skills) {
		folder := p.Skills[name]
		s := Skill{Name: name, Files: []string{}}
		if sk, err := skill.Parse(folder[skill.FileName]); err == nil {
			s.Description = sk.Description
		}
		for _, rel := range sortedNames(folder) {
			if rel != skill.FileName {
				s.Files = append(s.Files, rel)
			}
		}
		out = append(out, s)
	}
	return out
}

// fileList is the paths under files/, sorted.
func (p *Package) fileList() []string {
	out := sortedNames(p.Files)
	if out == nil {
		out = []string{}
	}
	return out
}

// pack writes the package as a zip: template.json, soul.md, the skills and
// the files, in a fixed order, each entry dated modified.
func (p *Package) pack(modified time.Time) ([]byte, error) {
	manifest, err := p.manifestJSON()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name string, data []byte) error {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: modified})
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	if err := add(manifestName, manifest); err != nil {
		return nil, err
	}
	if err := add(soulName, []byte(p.Soul)); err != nil {
		return nil, err
	}
	for _, name := range sortedNames(p.Skills) {
		for _, rel := range sortedNames(p.Skills[name]) {
			if err := add(skillsDir+"/"+name+"/"+rel, p.Skills[name][rel]); err != nil {
				return nil, err
			}
		}
	}
	for _, rel := range sortedNames(p.Files) {
		if err := add(filesDir+"/"+rel, p.Files[rel]); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeFolder lays the content out in dir (a new, empty folder): soul.md,
// skills/<name>/… and files/….
func (p *Package) writeFolder(dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	write := func(name string, data []byte) error {
		if d := path.Dir(name); d != "." {
			if err := root.MkdirAll(d, 0o700); err != nil {
				return err
			}
		}
		return root.WriteFile(name, data, 0o600)
	}
	if err := write(soulName, []byte(p.Soul)); err != nil {
		return err
	}
	for name, folder := range p.Skills {
		for rel, data := range folder {
			if err := write(skillsDir+"/"+name+"/"+rel, data); err != nil {
				return err
			}
		}
	}
	for rel, data := range p.Files {
		if err := write(filesDir+"/"+rel, data); err != nil {
			return err
		}
	}
	return nil
}

// readFolder reads a template's folder. Only plain files count; a missing
// folder is an empty template.
func readFolder(dir string) (*Package, error) {
	p := &Package{Skills: map[string]map[string][]byte{}, Files: map[string][]byte{}}
	soul, err := os.ReadFile(filepath.Join(dir, soulName))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	p.Soul = string(soul)
	err = walkFiles(filepath.Join(dir, skillsDir), func(rel string, data []byte) {
		name, file, ok := strings.Cut(rel, "/")
		if !ok {
			return
		}
		if p.Skills[name] == nil {
			p.Skills[name] = map[string][]byte{}
		}
		p.Skills[name][file] = data
	})
	if err != nil {
		return nil, err
	}
	err = walkFiles(filepath.Join(dir, filesDir), func(rel string, data []byte) { p.Files[rel] = data })
	return p, err
}

// walkFiles calls fn with each plain file under dir (slash-separated path
// relative to dir), skipping links; a missing dir has none.
func walkFiles(dir string, fn func(rel string, data []byte)) error {
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fn(filepath.ToSlash(rel), data)
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
