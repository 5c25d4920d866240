package secret

import (
	"errors"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

func TestResolve(t *testing.T) {
	vars := map[string]string{"TOKEN": "t0k3n", "USER": "ada", "lower_ok": "yes", "DOLLAR": "${USER}"}
	tests := []struct {
		name, in, want string
		errHas         []string // the error must contain each; nil: no error
	}{
		{"no dollar", "plain text", "plain text", nil},
		{"empty", "", "", nil},
		{"one", "Bearer ${TOKEN}", "Bearer t0k3n", nil},
		{"two and repeat", "${USER}:${TOKEN}@${USER}", "ada:t0k3n@ada", nil},
		{"lowercase name", "${lower_ok}", "yes", nil},
		{"value is not resolved again", "${DOLLAR}", "${USER}", nil},
		{"escape", "echo $${TOKEN}", "echo ${TOKEN}", nil},
		{"escape then reference", "$${TOKEN}=${TOKEN}", "${TOKEN}=t0k3n", nil},
		{"escape of a non-name", "$${ not a name", "${ not a name", nil},
		{"shell variable left alone", "echo $HOME $TOKEN", "echo $HOME $TOKEN", nil},
		{"lone dollars", "costs $5, $ and $", "costs $5, $ and $", nil},
		{"double dollar without brace", "pid $$ ok", "pid $$ ok", nil},
		{"triple dollar", "$$${TOKEN}", "$${TOKEN}", nil},
		{"utf-8 around", "é${USER}ü", "éadaü", nil},
		{"unclosed", "a\nbc ${TOKEN", "", []string{"line 2, column 4", "not closed", "$${"}},
		{"unclosed at end", "x $${A} ${", "", []string{"line 1, column 9", "not closed"}},
		{"empty name", "${}", "", []string{`"${}"`, "not a variable reference"}},
		{"digit first", "${1X}", "", []string{`"${1X}"`, "not starting with a digit"}},
		{"default syntax", "${TOKEN:-x}", "", []string{`"${TOKEN:-x}"`, "no spaces, defaults"}},
		{"space", "${ TOKEN }", "", []string{`"${ TOKEN }"`, "line 1, column 1"}},
		{"unknown", "${NOPE}", "", []string{"no workspace variable named NOPE;", "add it in Settings → Variables", "$${NOPE}"}},
		{"unknown listed once each, in order", "${FOO} ${TOKEN} ${BAR} ${FOO}", "", []string{"no workspace variables named FOO, BAR;", "add them", "case-sensitive", "$${FOO} for a literal ${FOO}"}},
		{"case-sensitive", "${token}", "", []string{"named token;"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(tt.in, func(name string) (string, bool) {
				v, ok := vars[name]
				return v, ok
			})
			if tt.errHas == nil {
				if err != nil || got != tt.want {
					t.Fatalf("got %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("got %q, want an error", got)
			}
			if !errors.Is(err, fault.ErrInvalid) {
				t.Errorf("error %v is not fault.ErrInvalid", err)
			}
			if got != "" {
				t.Errorf("got %q with the error, want nothing (all or nothing)", got)
			}
			for _, s := range tt.errHas {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			for _, v := range vars {
				if v != "${USER}" && strings.Contains(err.Error(), v) {
					t.Errorf("error %q contains the value %q", err, v)
				}
			}
		})
	}
}

func TestResolveLooksUpEachNameOnce(t *testing.T) {
	var asked []string
	got, err := Resolve("${A} ${B} ${A} $A", func(name string) (string, bool) {
		asked = append(asked, name)
		return strings.ToLower(name), true
	})
	if err != nil || got != "a b a $A" {
		t.Fatalf("got %q, %v; want %q", got, err, "a b a $A")
	}
	if strings.Join(asked, ",") != "A,B" {
		t.Errorf("looked up %v, want [A B]", asked)
	}
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{"", "plain", "${A}", "$${A}", "$A $ $$", "${", "${A", "${1}", "$$${A}${B}", "${A}${UNKNOWN}", "a\n${ b }"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var asked []string
		got, err := Resolve(in, func(name string) (string, bool) {
			asked = append(asked, name)
			if strings.HasPrefix(name, "U") { // some names are unknown
				return "", false
			}
			return "[" + name + "]", true // no $ or {: cannot form a ${ in the output
		})
		for _, name := range asked {
			if !strings.Contains(in, "${"+name+"}") {
				t.Errorf("looked up %q, which is not written in %q", name, in)
			}
		}
		if !strings.Contains(in, "$") && (got != in || err != nil) {
			t.Fatalf("Resolve(%q) = %q, %v; want it unchanged", in, got, err)
		}
		if err != nil {
			if got != "" {
				t.Errorf("Resolve(%q) returned %q with an error", in, got)
			}
			return
		}
		// Every ${ in the output comes from an escape $${ in the input.
		if n, want := strings.Count(got, "${"), strings.Count(in, "$${"); n != want {
			t.Errorf("Resolve(%q) = %q: %d ${ in the output, want %d (one per escape)", in, got, n, want)
		}
	})
}
