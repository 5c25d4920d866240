package autostart

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// plistArgs reads a LaunchAgent back as launchd does: its Label, its
// ProgramArguments and whether it runs at load.
func plistArgs(t *testing.T, b []byte) (label string, args []string, atLoad bool) {
	t.Helper()
	var doc struct {
		Dict struct {
			Items []struct {
				XMLName xml.Name
				Text    string   `xml:",chardata"`
				Strings []string `xml:"string"`
			} `xml:",any"`
		} `xml:"dict"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("the LaunchAgent is not XML: %v\n%s", err, b)
	}
	var key string
	for _, it := range doc.Dict.Items {
		switch it.XMLName.Local {
		case "key":
			key = it.Text
			continue
		case "string":
			if key == "Label" {
				label = it.Text
			}
		case "array":
			if key == "ProgramArguments" {
				args = it.Strings
			}
		case "true":
			if key == "RunAtLoad" {
				atLoad = true
			}
		}
	}
	return label, args, atLoad
}

// On macOS the entry is a LaunchAgent in ~/Library/LaunchAgents that runs
// the binary hidden at login; any data directory reads back exactly.
func TestLaunchAgent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "Library", "LaunchAgents")
	data := `/Users/me/Rerun <data> & "more" 100%`
	e := &Entry{OS: "darwin", Dir: dir, Exec: "/Applications/Rerun.app/Contents/MacOS/rerun", Args: []string{"--hidden", "--data-dir", data}}
	if st := e.State(); st.Enabled || !st.Available {
		t.Fatalf("state before = %+v", st)
	}
	st, err := e.Set(true)
	if err != nil || !st.Enabled || st.Path != filepath.Join(dir, "build.rerun.desktop.plist") {
		t.Fatalf("Set(true) = %+v, %v", st, err)
	}
	b, _ := os.ReadFile(st.Path)
	label, args, atLoad := plistArgs(t, b)
	if label != "build.rerun.desktop" || !atLoad {
		t.Errorf("label %q, RunAtLoad %v:\n%s", label, atLoad, b)
	}
	if want := append([]string{e.Exec}, e.Args...); !reflect.DeepEqual(args, want) {
		t.Errorf("ProgramArguments read back as %q, want %q", args, want)
	}
	if !strings.Contains(string(b), "<key>KeepAlive</key>\n\t<false/>") {
		t.Errorf("a LaunchAgent that restarts Rerun after Quit:\n%s", b)
	}
	if st, err := e.Set(false); err != nil || st.Enabled {
		t.Fatalf("Set(false) = %+v, %v", st, err)
	}
	if _, err := os.Stat(st.Path); !os.IsNotExist(err) {
		t.Errorf("LaunchAgent still there: %v", err)
	}
}

// mapRunKey stands in for the registry's Run key.
type mapRunKey map[string]string

func (m mapRunKey) Get(name string) (string, bool, error) { v, ok := m[name]; return v, ok, nil }
func (m mapRunKey) Set(name, value string) error          { m[name] = value; return nil }
func (m mapRunKey) Delete(name string) error              { delete(m, name); return nil }

// argv splits a command line as CommandLineToArgvW does (the rules of
// Microsoft's C runtime since 2008): backslashes are literal unless they
// precede a quote, where 2n of them are n and a quote that opens or closes,
// 2n+1 are n and a literal quote; "" inside quotes is a literal quote.
func argv(cmd string) []string {
	var args []string
	var w strings.Builder
	in, quoted := false, false
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case c == '\\':
			n := 0
			for i < len(cmd) && cmd[i] == '\\' {
				n++
				i++
			}
			if i < len(cmd) && cmd[i] == '"' {
				w.WriteString(strings.Repeat(`\`, n/2))
				if n%2 == 1 {
					w.WriteByte('"')
				} else {
					i-- // the quote opens or closes
				}
			} else {
				w.WriteString(strings.Repeat(`\`, n))
				i--
			}
			in = true
		case c == '"':
			if quoted && i+1 < len(cmd) && cmd[i+1] == '"' {
				w.WriteByte('"')
				i++
			} else {
				quoted = !quoted
			}
			in = true
		case !quoted && (c == ' ' || c == '\t'):
			if in {
				args = append(args, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		args = append(args, w.String())
	}
	return args
}

// On Windows the entry is the Run key's "Rerun" value: a command line that
// gives back the binary and every argument exactly.
func TestRunKey(t *testing.T) {
	key := mapRunKey{}
	data := `C:\Users\me\Rerun "data"\ dir\`
	e := &Entry{OS: "windows", runKey: key, Exec: `C:\Users\me\AppData\Local\Programs\Rerun\rerun.exe`, Args: []string{"--hidden", "--data-dir", data}}
	if st := e.State(); st.Enabled || !st.Available {
		t.Fatalf("state before = %+v", st)
	}
	st, err := e.Set(true)
	if err != nil || !st.Enabled || st.Path != `HKCU\Software\Microsoft\Windows\CurrentVersion\Run\Rerun` {
		t.Fatalf("Set(true) = %+v, %v", st, err)
	}
	if got, want := argv(key["Rerun"]), append([]string{e.Exec}, e.Args...); !reflect.DeepEqual(got, want) {
		t.Errorf("the Run value %s reads back as %q, want %q", key["Rerun"], got, want)
	}
	if st, err := e.Set(false); err != nil || st.Enabled || len(key) != 0 {
		t.Fatalf("Set(false) = %+v, %v, key %v", st, err, key)
	}
}

// Any argument reads back from the Run key's command line exactly.
func FuzzWindowsArg(f *testing.F) {
	for _, s := range []string{"", "plain", "a b", `q"uote`, `trail\`, `C:\a b\`, `\\"`, "tab\there", `""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, a string) {
		if strings.ContainsRune(a, 0) {
			return
		}
		got := argv("bin " + windowsArg(a))
		if len(got) != 2 || got[0] != "bin" || got[1] != a {
			t.Fatalf("%q reads back as %q (%s)", a, got, windowsArg(a))
		}
	})
}
