//go:build unix

package tool

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/secret"
)

// maskingVars resolves from a fixed map and masks its values, as the
// workspace's variables do.
type maskingVars map[string]string

func (m maskingVars) Resolve(text string) (string, error) {
	return secret.Resolve(text, func(n string) (string, bool) { v, ok := m[n]; return v, ok })
}

func (m maskingVars) Redactor() *secret.Redactor { return secret.NewRedactor(m) }

// hostile breaks every quoting a command could put around it and would run
// a command (touch pwned) if the shell read it as syntax.
const hostile = `a"b'c $(touch pwned) ` + "`touch pwned`" + ` \ $HOME ; touch pwned & x|y
second line`

func TestVariablesQuotedInShell(t *testing.T) {
	env := testEnv(t)
	env.Vars = mapVars{"V": hostile, "PLAIN": "plain-value", "END": "x\nEOF\ntouch pwned"}
	tests := []struct{ name, command, want string }{
		{"bare", `printf '%s' ${V}`, hostile},
		{"in double quotes", `printf '%s' "${V}"`, hostile},
		{"in double quotes with text around", `printf '%s' "<${V}>"`, "<" + hostile + ">"},
		{"in single quotes", `printf '%s' '${V}'`, hostile},
		{"in single quotes with text around", `printf '%s' '<${V}>'`, "<" + hostile + ">"},
		{"glued to a word", `printf '%s' key=${V}`, "key=" + hostile},
		{"in a command substitution", `printf '%s' "$(printf '%s' ${V})"`, hostile},
		{"in a command substitution in double quotes", `printf '%s' "$(printf '%s' "${V}")"`, hostile},
		{"in backquotes", "printf '%s' \"`printf '%s' ${V}`\"", hostile},
		{"in double quotes in backquotes", "printf '%s' `printf '%s' \"${V}\"`", strings.Join(strings.Fields(hostile), "")},
		{"in backquotes in backquotes", "printf '%s' \"`printf '%s' \\`printf '%s' ${V}\\``\"", strings.Join(strings.Fields(hostile), "")},
		{"in a here-document", "cat <<EOF\n${V}\nEOF", hostile + "\n"},
		{"in a here-document with a quoted end word", "cat <<'EOF'\n${V}\nEOF", hostile + "\n"},
		{"in a here-document with tabs stripped", "cat <<-EOF\n\t${V}\n\tEOF", hostile + "\n"},
		{"in a comment", "printf ok # ${V}", "ok"},
		{"plain value, bare", `printf '%s' ${PLAIN}`, "plain-value"},
		{"after a here-document", "cat <<EOF\nx\nEOF\nprintf '%s' ${V}", "x\n" + hostile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runShell(t, env, map[string]any{"command": tt.command})
			if res.Output != tt.want {
				t.Errorf("output = %q, want %q", res.Output, tt.want)
			}
			if _, err := os.Stat(filepath.Join(env.FilesDir, "pwned")); err == nil {
				t.Fatal("the value ran as a command")
			}
		})
	}
	t.Run("env passes the value as it is", func(t *testing.T) {
		res := runShell(t, env, map[string]any{"command": `printf '%s' "$X"`, "env": map[string]any{"X": "${V}"}})
		if res.Output != hostile {
			t.Errorf("output = %q, want %q", res.Output, hostile)
		}
	})
	for _, tt := range []struct{ name, command, want string }{
		{"after a backslash", `echo \${V}`, `without the backslash`},
		{"a line that ends the here-document", "cat <<EOF\n${END}\nEOF", `ends the here-document (EOF)`},
	} {
		t.Run("refused "+tt.name, func(t *testing.T) {
			_, err := call(t, env, "run_command", map[string]any{"command": tt.command})
			if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want an invalid error saying %q", err, tt.want)
			}
		})
	}
}

// A value printed across the cut between the head and the tail of a long
// output is masked before the cut, on both sides.
func TestShellOutputMaskedBeforeTheCut(t *testing.T) {
	const tok = "CANARY-7-0123456789abcdef"
	env := testEnv(t)
	env.Vars = maskingVars{"C": tok}
	half := MaxCommandOutput / 2
	for _, tt := range []struct {
		name         string
		total, start int // output length, where the value starts
	}{
		{"across the head's end", 3 * half, half - len(tok)/2},
		{"across the tail's start", 3 * half, 2*half - len(tok)/2},
		{"across the tail's start, just over the limit", 2*half + 100, half + 100 - len(tok)/2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := `head -c ` + itoa(tt.start) + ` /dev/zero | tr '\0' a; printf '%s' "$T"; head -c ` + itoa(tt.total-tt.start-len(tok)) + ` /dev/zero | tr '\0' z`
			res := runShell(t, env, map[string]any{"command": cmd, "env": map[string]any{"T": "${C}"}})
			if !strings.Contains(res.Output, "[truncated:") {
				t.Fatalf("output of %d bytes was not cut", len(res.Output))
			}
			for _, piece := range []string{tok[:len(tok)/2], tok[len(tok)/2:], "CANARY-7"} {
				if strings.Contains(res.Output, piece) {
					t.Errorf("%q of the value is in the output", piece)
				}
			}
			if !strings.Contains(res.Output, "[redacted:C]") {
				t.Error("no mask in the output")
			}
		})
	}
}

// A value cut by read_file's page end is masked on both pages.
func TestReadFileMasksAcrossPages(t *testing.T) {
	const tok = "CANARY-7-0123456789abcdef"
	env := testEnv(t)
	env.Vars = maskingVars{"C": tok}
	os.MkdirAll(env.FilesDir, 0o755)
	body := strings.Repeat("a", MaxReadBytes-len(tok)/2) + tok + strings.Repeat("z", 100)
	os.WriteFile(filepath.Join(env.FilesDir, "f.txt"), []byte(body), 0o600)
	first := mustCall(t, env, "read_file", map[string]any{"path": "f.txt"})
	second := mustCall(t, env, "read_file", map[string]any{"path": "f.txt", "offset": MaxReadBytes})
	for _, page := range []string{first, second} {
		if strings.Contains(page, tok[:len(tok)/2]) || strings.Contains(page, tok[len(tok)/2:]) {
			t.Errorf("half the value is on a page: %.60q…", page[max(0, len(page)-200):])
		}
		if !strings.Contains(page, "[redacted:C]") {
			t.Error("no mask on a page")
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func FuzzShellQuote(f *testing.F) {
	f.Add(hostile, `printf '%s' "${V}"`)
	f.Add("it's", `printf '%s' '${V}'`)
	f.Add("x", "cat <<E\n${V}\nE")
	f.Add("y", "printf %s $(printf %s ${V}) # ${V}")
	sh, err := exec.LookPath("sh")
	f.Fuzz(func(t *testing.T, value, command string) {
		places := shellPlaces(command) // reads any text without failing
		for i := range places {
			if command[i] != '$' {
				t.Fatalf("place %d is %q, not a $", i, command[i])
			}
		}
		if err != nil || strings.ContainsAny(value, "\x00") || !strings.Contains(command, "${V}") || len(command) > 200 || strings.Count(command, "${V}") > 1 {
			return
		}
		// Quoted values read back as written, wherever they stand in
		// the printf argument.
		for _, tmpl := range []string{`printf '%s' ${V}`, `printf '%s' "${V}"`, `printf '%s' '${V}'`, `printf '%s' "$(printf '%s' ${V})"`} {
			out, err := secret.Expand(tmpl, func(string) (string, bool) { return value, true }, func(name, v string, at int) (string, error) {
				return quoteForShell(shellPlaces(tmpl)[at], name, v)
			})
			if err != nil {
				t.Fatal(err)
			}
			got, err := exec.Command(sh, "-c", out).Output()
			want := value
			if strings.Contains(tmpl, "$(") {
				want = strings.TrimRight(value, "\n") // $(…) drops trailing newlines
			}
			if err != nil || string(got) != want {
				t.Errorf("%s with %q: got %q (%v), want the value", tmpl, value, got, err)
			}
		}
	})
}
