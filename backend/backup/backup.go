// Package backup owns the backup file of a workspace: a tar stream encrypted
// with age under a passphrase (scrypt), holding a header, the workspace's
// files (its databases already copied with VACUUM INTO by the caller) and,
// last, a manifest of every file's size and SHA-256.
//
// A reader checks every name (no "..", no absolute path, regular files
// only), every size and every hash, and the manifest against what it read;
// Read with no sink is the check that runs before anything is written.
//
// Above the format (workspace.go, folder.go, schedule.go): which files of a
// workspace go in and how its databases are copied, a backup file unpacked
// as a new workspace's folder, backups into a folder with the last few
// kept, and the daily schedule. Opening the restored workspace is the
// composition root's (backend/workspace).
package backup

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"filippo.io/age"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Format and Version name the file's layout; a reader refuses other ones.
const (
	Format  = "rerun-backup"
	Version = 1
)

// The two entries the format itself owns; every other entry is a file.
const (
	HeaderName   = "backup.json"
	ManifestName = "manifest.json"
)

// Limits a reader holds a file to, whatever its manifest says.
const (
	MaxFiles    = 200_000
	maxNameLen  = 1024
	maxMetaSize = 64 << 20 // the header and manifest entries
	// MinPassphrase is the shortest passphrase a backup is written under.
	MinPassphrase = 8
)

// Sentinel errors: a reader's failure is one of these (errors.Is), with the
// detail in the message.
var (
	// ErrPassphrase: the passphrase does not open the file.
	ErrPassphrase = errors.New("the passphrase does not open this backup")
	// ErrDamaged: the file is truncated, altered or not a backup.
	ErrDamaged = errors.New("the backup file is damaged or not a Rerun backup")
)

// Header says what a backup holds.
type Header struct {
	Format        string    `json:"format"`
	Version       int       `json:"version"`
	WorkspaceID   string    `json:"workspace_id"`
	WorkspaceName string    `json:"workspace_name"`
	CreatedAt     time.Time `json:"created_at"`
	// App is the version of Rerun that wrote it.
	App string `json:"app,omitempty"`
}

// Entry is one file as the manifest lists it.
type Entry struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Manifest lists every file of a backup, in order.
type Manifest struct {
	Files []Entry `json:"files"`
	Total int64   `json:"total_bytes"`
}

// Writer writes one backup file.
type Writer struct {
	enc     io.WriteCloser
	tw      *tar.Writer
	seen    map[string]bool
	list    Manifest
	modTime time.Time
}

// WorkFactor is the scrypt work factor (log2 N) backups are written with;
// age's default (18, about a second here). Tests lower it.
var WorkFactor = 18

// NewWriter starts a backup on out, encrypted under passphrase.
func NewWriter(out io.Writer, passphrase string, h Header) (*Writer, error) {
	if utf8.RuneCountInString(passphrase) < MinPassphrase {
		return nil, fault.Invalid("the backup passphrase is too short: use at least %d characters", MinPassphrase)
	}
	rcp, err := age.NewScryptRecipient(passphrase)
	if err != nil {
		return nil, fault.Invalid("backup passphrase: %v", err)
	}
	rcp.SetWorkFactor(WorkFactor)
	enc, err := age.Encrypt(out, rcp)
	if err != nil {
		return nil, fmt.Errorf("start the backup: %w", err)
	}
	h.Format, h.Version = Format, Version
	w := &Writer{enc: enc, tw: tar.NewWriter(enc), seen: map[string]bool{}, modTime: h.CreatedAt}
	b, _ := json.Marshal(h)
	if err := w.entry(HeaderName, b); err != nil {
		return nil, err
	}
	return w, nil
}

// entry writes a format entry (header, manifest).
func (w *Writer) entry(name string, b []byte) error {
	if err := w.tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(b)), ModTime: w.modTime, Typeflag: tar.TypeReg}); err != nil {
		return fmt.Errorf("write the backup: %w", err)
	}
	if _, err := w.tw.Write(b); err != nil {
		return fmt.Errorf("write the backup: %w", err)
	}
	return nil
}

// Add writes the file name (slash-separated, relative) of size bytes read
// from r. A file that gives fewer or more bytes than size (it changed while
// being read) fails the backup.
func (w *Writer) Add(name string, size int64, r io.Reader) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if w.seen[name] {
		return fmt.Errorf("back up %s: added twice", name)
	}
	w.seen[name] = true
	if err := w.tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: size, ModTime: w.modTime, Typeflag: tar.TypeReg}); err != nil {
		return fmt.Errorf("back up %s: %w", name, err)
	}
	sum := sha256.New()
	n, err := io.Copy(w.tw, io.TeeReader(io.LimitReader(r, size), sum))
	if err != nil {
		return fmt.Errorf("back up %s: %w", name, err)
	}
	if n != size {
		return fmt.Errorf("back up %s: it changed while being read (%d bytes of %d); back up again", name, n, size)
	}
	w.list.Files = append(w.list.Files, Entry{Path: name, Size: size, SHA256: hex.EncodeToString(sum.Sum(nil))})
	w.list.Total += size
	return nil
}

// AddBytes writes the file name holding b.
func (w *Writer) AddBytes(name string, b []byte) error {
	return w.Add(name, int64(len(b)), strings.NewReader(string(b)))
}

// Close writes the manifest and finishes the encryption. The backup is
// whole only when Close returns nil.
func (w *Writer) Close() error {
	b, _ := json.Marshal(w.list)
	if err := w.entry(ManifestName, b); err != nil {
		return err
	}
	if err := w.tw.Close(); err != nil {
		return fmt.Errorf("finish the backup: %w", err)
	}
	if err := w.enc.Close(); err != nil {
		return fmt.Errorf("finish the backup: %w", err)
	}
	return nil
}

// Manifest is what the writer has listed so far.
func (w *Writer) Manifest() Manifest { return w.list }

// CheckName refuses a name that is not a clean relative slash path inside
// the backup: empty, absolute, with "..", ".", a backslash, a drive letter,
// a control character, or one of the format's own entry names.
func CheckName(name string) error {
	bad := func(why string) error { return fmt.Errorf("%w: file name %.80q %s", ErrDamaged, name, why) }
	switch {
	case name == "" || len(name) > maxNameLen:
		return bad("is empty or too long")
	case !utf8.ValidString(name):
		return bad("is not UTF-8")
	case strings.HasPrefix(name, "/") || strings.Contains(name, `\`) || strings.Contains(name, ":"):
		return bad("is absolute or not a slash path")
	case path.Clean(name) != name:
		return bad("is not a clean path")
	case name == HeaderName || name == ManifestName:
		return bad("is reserved")
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." || part == "." {
			return bad("leaves its folder")
		}
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return bad("has a control character")
		}
	}
	return nil
}

// Sink takes each file of a backup as it is read; its content is checked
// against the manifest only after the last file, so a sink writes to a
// place it removes when Read fails.
type Sink func(name string, size int64, r io.Reader) error

// Read decrypts and checks the backup in, handing each file to sink (nil:
// check only). It returns the header and manifest when every file is
// present, of its size and hash, and nothing else is there.
func Read(in io.Reader, passphrase string, sink Sink) (Header, Manifest, error) {
	id, err := age.NewScryptIdentity(passphrase)
	if err != nil {
		return Header{}, Manifest{}, fmt.Errorf("%w: %v", ErrPassphrase, err)
	}
	plain, err := age.Decrypt(in, id)
	if err != nil {
		var wrong *age.NoIdentityMatchError
		if errors.As(err, &wrong) {
			return Header{}, Manifest{}, ErrPassphrase
		}
		return Header{}, Manifest{}, fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	return readTar(plain, sink)
}

func damaged(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrDamaged, fmt.Sprintf(format, args...))
}

func readTar(plain io.Reader, sink Sink) (Header, Manifest, error) {
	plain = damagedReader{plain}
	tr := tar.NewReader(plain)
	var h Header
	var files []Entry
	seen := map[string]bool{}
	for i := 0; ; i++ {
		th, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return Header{}, Manifest{}, damaged("it ends before its manifest (truncated?)")
		}
		if errors.Is(err, ErrDamaged) {
			return Header{}, Manifest{}, err
		}
		if err != nil {
			return Header{}, Manifest{}, damaged("%v", err)
		}
		if th.Typeflag != tar.TypeReg {
			return Header{}, Manifest{}, damaged("entry %.80q is not a regular file (links and folders are refused)", th.Name)
		}
		if th.Size < 0 {
			return Header{}, Manifest{}, damaged("entry %.80q has a negative size", th.Name)
		}
		switch {
		case i == 0:
			if th.Name != HeaderName {
				return Header{}, Manifest{}, damaged("it does not start with %s", HeaderName)
			}
			if err := readJSON(tr, th.Size, &h); err != nil {
				return Header{}, Manifest{}, err
			}
			if h.Format != Format || h.Version != Version {
				return Header{}, Manifest{}, damaged("format %.40q version %d is not %s version %d", h.Format, h.Version, Format, Version)
			}
		case th.Name == ManifestName:
			var m Manifest
			if err := readJSON(tr, th.Size, &m); err != nil {
				return Header{}, Manifest{}, err
			}
			if err := sameFiles(m, files); err != nil {
				return Header{}, Manifest{}, err
			}
			// Nothing may follow the manifest but the end of the stream.
			if _, err := tr.Next(); !errors.Is(err, io.EOF) {
				return Header{}, Manifest{}, damaged("something follows the manifest")
			}
			if _, err := io.Copy(io.Discard, plain); err != nil {
				return Header{}, Manifest{}, damaged("%v", err)
			}
			return h, m, nil
		default:
			if err := CheckName(th.Name); err != nil {
				return Header{}, Manifest{}, err
			}
			if seen[th.Name] {
				return Header{}, Manifest{}, damaged("%.80q appears twice", th.Name)
			}
			if len(files) >= MaxFiles {
				return Header{}, Manifest{}, damaged("more than %d files", MaxFiles)
			}
			seen[th.Name] = true
			sum := sha256.New()
			body := io.TeeReader(tr, sum)
			if sink != nil {
				err = sink(th.Name, th.Size, body)
			}
			if err == nil {
				_, err = io.Copy(io.Discard, body) // what the sink left unread
			}
			if err != nil {
				if errors.Is(err, ErrDamaged) || fault.Is(err) {
					return Header{}, Manifest{}, err
				}
				return Header{}, Manifest{}, fmt.Errorf("read %s: %w", th.Name, err)
			}
			files = append(files, Entry{Path: th.Name, Size: th.Size, SHA256: hex.EncodeToString(sum.Sum(nil))})
		}
	}
}

// damagedReader marks a failure to read the decrypted stream (a chunk that
// does not authenticate, a cut) as ErrDamaged, apart from a sink's own.
type damagedReader struct{ r io.Reader }

func (d damagedReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	return n, err
}

func readJSON(r io.Reader, size int64, v any) error {
	if size > maxMetaSize {
		return damaged("an index entry of %d bytes is too large", size)
	}
	b, err := io.ReadAll(io.LimitReader(r, size))
	if err != nil {
		return damaged("%v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return damaged("unreadable index: %v", err)
	}
	return nil
}

// sameFiles checks the manifest against the files read, in order.
func sameFiles(m Manifest, got []Entry) error {
	if len(m.Files) != len(got) {
		return damaged("the manifest lists %d files, the backup holds %d", len(m.Files), len(got))
	}
	var total int64
	for i, want := range m.Files {
		g := got[i]
		if want.Path != g.Path || want.Size != g.Size || want.SHA256 != g.SHA256 {
			return damaged("%.80q does not match the manifest (size %d, want %d)", g.Path, g.Size, want.Size)
		}
		total += g.Size
	}
	if total != m.Total {
		return damaged("the manifest's total %d is not the files' %d bytes", m.Total, total)
	}
	return nil
}
