package autostart

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// execWords reads an Exec key's value back into its words, as a session's
// autostart does (Desktop Entry Specification: the string value's escapes
// first, then the quoting of arguments, then %% for %).
func execWords(value string) []string {
	var v strings.Builder
	for i := 0; i < len(value); i++ {
		if value[i] == '\\' && i+1 < len(value) {
			i++
			switch value[i] {
			case 'n':
				v.WriteByte('\n')
			case 't':
				v.WriteByte('\t')
			case 'r':
				v.WriteByte('\r')
			default:
				v.WriteByte(value[i])
			}
			continue
		}
		v.WriteByte(value[i])
	}
	s := v.String()
	var words []string
	var w strings.Builder
	in, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
		case c == '"':
			quoted, in = !quoted, true
		case !quoted && c == ' ':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	for i := range words {
		words[i] = strings.ReplaceAll(words[i], "%%", "%")
	}
	return words
}

func execLine(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Exec="); ok {
			return v
		}
	}
	t.Fatalf("no Exec line in %s", b)
	return ""
}

// The entry goes under $XDG_CONFIG_HOME (else ~/.config), launches this
// binary hidden on its data directory, and goes away when turned off. It is
// launched here as a session would: its Exec line read back and run.
func TestEntryWrittenLaunchedRemoved(t *testing.T) {
	config := filepath.Join(t.TempDir(), "my config")
	t.Setenv("XDG_CONFIG_HOME", config)
	data := filepath.Join(t.TempDir(), `data "dir" $HOME 100%`)
	e := ForBinary(data)
	if e == nil {
		t.Skip("no autostart entry on this OS")
	}
	if e.Dir != filepath.Join(config, "autostart") {
		t.Errorf("entry dir %q, want under XDG_CONFIG_HOME", e.Dir)
	}
	if st := e.State(); st.Enabled || !st.Available {
		t.Fatalf("state before = %+v, want available, off", st)
	}

	// A stand-in binary at a path with a space records its arguments.
	bin := filepath.Join(t.TempDir(), "my bin", "rerun")
	os.MkdirAll(filepath.Dir(bin), 0o755)
	got := filepath.Join(t.TempDir(), "args")
	os.WriteFile(bin, []byte("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > '"+got+"'\n"), 0o755)
	e.Exec = bin

	st, err := e.Set(true)
	if err != nil || !st.Enabled || st.Path != filepath.Join(config, "autostart", "rerun.desktop") {
		t.Fatalf("Set(true) = %+v, %v", st, err)
	}
	b, _ := os.ReadFile(st.Path)
	for _, want := range []string{"[Desktop Entry]\n", "Type=Application\n", "Name=Rerun\n", "Terminal=false\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("entry lacks %q:\n%s", want, b)
		}
	}
	words := execWords(execLine(t, st.Path))
	if want := []string{bin, "--hidden", "--data-dir", data}; !reflect.DeepEqual(words, want) {
		t.Fatalf("Exec reads back as %q, want %q", words, want)
	}
	if out, err := exec.Command(words[0], words[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("launch the entry: %v %s", err, out)
	}
	if b, _ := os.ReadFile(got); string(b) != "--hidden\n--data-dir\n"+data+"\n" {
		t.Errorf("the launched binary got %q", b)
	}

	if st, err := e.Set(false); err != nil || st.Enabled {
		t.Fatalf("Set(false) = %+v, %v", st, err)
	}
	if _, err := os.Stat(st.Path); !os.IsNotExist(err) {
		t.Errorf("entry still there after turning off: %v", err)
	}
	if _, err := e.Set(false); err != nil {
		t.Errorf("turning off twice: %v", err)
	}
}

func TestRelativeConfigHomeIgnored(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "relative/dir")
	home := t.TempDir()
	t.Setenv("HOME", home)
	if e := ForBinary(t.TempDir()); e != nil && e.Dir != filepath.Join(home, ".config", "autostart") {
		t.Errorf("entry dir %q with a relative XDG_CONFIG_HOME, want ~/.config/autostart", e.Dir)
	}
}

func TestUnavailable(t *testing.T) {
	var e *Entry
	if st := e.State(); st.Available || st.Enabled {
		t.Errorf("nil entry state %+v", st)
	}
	if _, err := e.Set(true); err != ErrUnavailable {
		t.Errorf("Set on no entry: %v, want ErrUnavailable", err)
	}
}

// Any argument (a data directory is the person's to name) reads back from
// the entry exactly.
func FuzzExecArg(f *testing.F) {
	for _, s := range []string{"", "plain", "a b", `q"uo\te`, "$HOME `x`", "100%", "%f", "tab\there", "line\nbreak", `\\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, a string) {
		if strings.ContainsRune(a, 0) {
			return
		}
		got := execWords(escapeValue("bin " + execArg(a)))
		if len(got) != 2 || got[0] != "bin" || got[1] != a {
			t.Fatalf("%q reads back as %q", a, got)
		}
	})
}
