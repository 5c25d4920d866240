package backup

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
)

func init() { WorkFactor = 10 } // tests need no second of scrypt per file

const pass = "correct horse battery"

func write(t testing.TB, files map[string]string, order ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, pass, Header{WorkspaceID: "ws_1", WorkspaceName: "Acme", CreatedAt: time.Unix(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range order {
		if err := w.AddBytes(name, []byte(files[name])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	files := map[string]string{"workspace.db": "db bytes", "shared/a/b.txt": "hello", "agents/ag_1/skills/x/SKILL.md": strings.Repeat("s", 100_000)}
	b := write(t, files, "workspace.db", "shared/a/b.txt", "agents/ag_1/skills/x/SKILL.md")
	got := map[string]string{}
	h, m, err := Read(bytes.NewReader(b), pass, func(name string, size int64, r io.Reader) error {
		c, err := io.ReadAll(r)
		got[name] = string(c)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if h.WorkspaceName != "Acme" || h.Format != Format || len(m.Files) != 3 {
		t.Fatalf("got header %+v and %d files, want Acme and 3", h, len(m.Files))
	}
	for name, want := range files {
		if got[name] != want {
			t.Errorf("%s: got %d bytes, want %d", name, len(got[name]), len(want))
		}
	}
}

func TestRefusesDamage(t *testing.T) {
	good := write(t, map[string]string{"a.txt": strings.Repeat("x", 200_000)}, "a.txt")
	flip := func(i int) []byte { c := bytes.Clone(good); c[i] ^= 1; return c }
	cases := []struct {
		name string
		in   []byte
		pass string
		want error
	}{
		{"wrong passphrase", good, "not the passphrase", ErrPassphrase},
		{"truncated", good[:len(good)/2], pass, ErrDamaged},
		{"last byte gone", good[:len(good)-1], pass, ErrDamaged},
		{"byte flipped in the body", flip(len(good) / 2), pass, ErrDamaged},
		{"byte flipped at the end", flip(len(good) - 3), pass, ErrDamaged},
		{"not age", []byte("PK\x03\x04 a zip file"), pass, ErrDamaged},
		{"empty", nil, pass, ErrDamaged},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			called := 0
			_, _, err := Read(bytes.NewReader(c.in), c.pass, nil)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			_ = called
		})
	}
}

// sealTar encrypts a hand-made tar stream, as an attacker could.
func sealTar(t testing.TB, build func(tw *tar.Writer)) []byte {
	var plain bytes.Buffer
	tw := tar.NewWriter(&plain)
	build(tw)
	tw.Close()
	rcp, _ := age.NewScryptRecipient(pass)
	rcp.SetWorkFactor(10)
	var out bytes.Buffer
	enc, _ := age.Encrypt(&out, rcp)
	enc.Write(plain.Bytes())
	enc.Close()
	return out.Bytes()
}

func header(tw *tar.Writer) {
	b := []byte(`{"format":"rerun-backup","version":1}`)
	tw.WriteHeader(&tar.Header{Name: HeaderName, Size: int64(len(b)), Typeflag: tar.TypeReg, Mode: 0o600})
	tw.Write(b)
}

func TestRefusesPathTricks(t *testing.T) {
	for _, c := range []struct {
		name, path string
		typ        byte
	}{
		{"parent", "../evil", tar.TypeReg},
		{"inner parent", "shared/../../evil", tar.TypeReg},
		{"absolute", "/etc/passwd", tar.TypeReg},
		{"windows", `C:\evil`, tar.TypeReg},
		{"backslash", `shared\..\evil`, tar.TypeReg},
		{"symlink", "shared/link", tar.TypeSymlink},
		{"hard link", "shared/link", tar.TypeLink},
		{"folder", "shared/dir", tar.TypeDir},
		{"dot", "./shared/a", tar.TypeReg},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := sealTar(t, func(tw *tar.Writer) {
				header(tw)
				tw.WriteHeader(&tar.Header{Name: c.path, Linkname: "/etc/passwd", Typeflag: c.typ, Mode: 0o600})
			})
			sunk := false
			_, _, err := Read(bytes.NewReader(b), pass, func(string, int64, io.Reader) error { sunk = true; return nil })
			if !errors.Is(err, ErrDamaged) || sunk {
				t.Fatalf("got %v (sink called: %v), want ErrDamaged before the sink", err, sunk)
			}
		})
	}
}

func TestRefusesManifestMismatch(t *testing.T) {
	b := sealTar(t, func(tw *tar.Writer) {
		header(tw)
		tw.WriteHeader(&tar.Header{Name: "a.txt", Size: 2, Typeflag: tar.TypeReg, Mode: 0o600})
		tw.Write([]byte("hi"))
		m := []byte(`{"files":[{"path":"a.txt","size":2,"sha256":"00"}],"total_bytes":2}`)
		tw.WriteHeader(&tar.Header{Name: ManifestName, Size: int64(len(m)), Typeflag: tar.TypeReg, Mode: 0o600})
		tw.Write(m)
	})
	if _, _, err := Read(bytes.NewReader(b), pass, nil); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "a.txt") {
		t.Fatalf("got %v, want ErrDamaged naming a.txt", err)
	}
}

func TestShortPassphraseRefused(t *testing.T) {
	if _, err := NewWriter(io.Discard, "short", Header{}); err == nil {
		t.Fatal("got no error for a 5-character passphrase, want one")
	}
}

func FuzzRead(f *testing.F) {
	f.Add(write(f, map[string]string{"a.txt": "hello"}, "a.txt"))
	f.Add([]byte("age-encryption.org/v1\n-> scrypt AAAA 10\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, err := Read(bytes.NewReader(b), pass, func(name string, size int64, r io.Reader) error {
			if CheckName(name) != nil {
				t.Fatalf("sink got refused name %q", name)
			}
			return nil
		})
		if err != nil && !errors.Is(err, ErrDamaged) && !errors.Is(err, ErrPassphrase) {
			t.Fatalf("got %v: neither damaged nor a wrong passphrase", err)
		}
	})
}

func FuzzCheckName(f *testing.F) {
	for _, s := range []string{"a/b", "../x", "/x", "a//b", `a\b`, "a/./b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if CheckName(s) != nil {
			return
		}
		if strings.HasPrefix(s, "/") || strings.Contains(s, "..") && strings.Contains("/"+s+"/", "/../") {
			t.Fatalf("CheckName let %q through", s)
		}
	})
}
