package secret

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store/storetest"
)

func TestParseHosts(t *testing.T) {
	tests := []struct {
		name   string
		in     []string
		want   []string
		errHas string
	}{
		{"exact", []string{"api.github.com"}, []string{"api.github.com"}, ""},
		{"normalized", []string{" API.GitHub.com. ", "api.github.com", ""}, []string{"api.github.com"}, ""},
		{"wildcard", []string{"*.Example.com"}, []string{"*.example.com"}, ""},
		{"ip", []string{"127.0.0.1", "[::1]", "0:0::1"}, []string{"127.0.0.1", "::1"}, ""},
		{"single label", []string{"localhost"}, []string{"localhost"}, ""},
		{"none", nil, []string{}, ""},
		{"url", []string{"https://api.github.com/repos"}, nil, `write the host alone (here api.github.com), without scheme, path or user`},
		{"path", []string{"api.github.com/x"}, nil, `(here api.github.com)`},
		{"port", []string{"api.github.com:443"}, nil, "names a port"},
		{"star", []string{"*"}, nil, "leave the list empty"},
		{"star tld", []string{"*.com"}, nil, "at least two labels"},
		{"star inside", []string{"api.*.com"}, nil, "a * only as the first label"},
		{"space", []string{"api github.com"}, nil, "is not a host name"},
		{"dash end", []string{"api-.github.com"}, nil, "is not a host name"},
		{"unicode", []string{"bücher.de"}, nil, "is not a host name"},
		{"too many", manyHosts(33), nil, "33 hosts is more than the 32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHosts(tt.in)
			if tt.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) || !errors.Is(err, fault.ErrInvalid) {
					t.Fatalf("ParseHosts(%q) = %v, %v; want invalid error with %q", tt.in, got, err, tt.errHas)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseHosts(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func manyHosts(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("h%d.example.com", i))
	}
	return out
}

func TestHostAllowed(t *testing.T) {
	tests := []struct {
		patterns []string
		host     string
		want     bool
	}{
		{nil, "anything.example", true},
		{[]string{"api.github.com"}, "api.github.com", true},
		{[]string{"api.github.com"}, "API.GITHUB.COM:443", true},
		{[]string{"api.github.com"}, "api.github.com.", true},
		{[]string{"api.github.com"}, "github.com", false},
		{[]string{"api.github.com"}, "api.github.com.evil.example", false},
		{[]string{"api.github.com"}, "evilapi.github.com", false},
		{[]string{"*.github.com"}, "github.com", true},
		{[]string{"*.github.com"}, "a.b.github.com", true},
		{[]string{"*.github.com"}, "evilgithub.com", false},
		{[]string{"*.github.com"}, "github.com.evil.example", false},
		{[]string{"::1"}, "[::1]:8080", true},
		{[]string{"127.0.0.1"}, "127.0.0.1:9", true},
		{[]string{"127.0.0.1"}, "127.1", false},
		{[]string{"a.example"}, "", false},
	}
	for _, tt := range tests {
		if got := HostAllowed(tt.patterns, tt.host); got != tt.want {
			t.Errorf("HostAllowed(%q, %q) = %v, want %v", tt.patterns, tt.host, got, tt.want)
		}
	}
}

func TestURLHosts(t *testing.T) {
	got := URLHosts(`curl -H "x: y" 'https://user:pw@API.example.com:8443/p?q' http://[::1]:9/x git clone ssh://git@host.example/repo; echo ftp://f.example|cat "https://q.example"`)
	want := []string{"api.example.com", "::1", "host.example", "f.example", "q.example"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("URLHosts = %q, want %q", got, want)
	}
}

// FuzzParseHosts: any input is refused with an invalid error or normalized
// to patterns that parse to themselves and match their own host.
func FuzzParseHosts(f *testing.F) {
	for _, s := range []string{"api.github.com", "*.example.com", "[::1]", "https://x.example/a", "a:1", "*", "", "é.com", "A.B.", "*.a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseHosts(strings.Split(s, ","))
		if err != nil {
			if !errors.Is(err, fault.ErrInvalid) {
				t.Fatalf("ParseHosts(%q): %v is not an invalid-input error", s, err)
			}
			return
		}
		again, err := ParseHosts(got)
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("ParseHosts(%q) = %q, which parses again to %q, %v", s, got, again, err)
		}
		for _, p := range got {
			host := strings.TrimPrefix(p, "*.")
			if !HostAllowed(got, host) {
				t.Fatalf("%q does not allow its own host %q", got, host)
			}
			if HostAllowed([]string{p}, "x"+host+".invalid-suffix") {
				t.Fatalf("%q allows a host it does not name", p)
			}
		}
	})
}

func TestVariablesHosts(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	box := testBox(t, 1)
	v, err := NewVariables(db, box, "ws1", nil)
	if err != nil {
		t.Fatal(err)
	}
	hosts := []string{"API.github.com", "*.githubusercontent.com"}
	value := "ghp-value-123456"
	info, err := v.Update(ctx, "GH", Change{Value: &value, Hosts: &hosts})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"api.github.com", "*.githubusercontent.com"}; !reflect.DeepEqual(info.Hosts, want) {
		t.Fatalf("Update hosts = %q, want %q", info.Hosts, want)
	}
	// A new value alone keeps the hosts.
	if info, err = v.Set(ctx, "GH", "ghp-value-654321"); err != nil || len(info.Hosts) != 2 {
		t.Fatalf("Set kept hosts %q, %v; want both", info.Hosts, err)
	}
	if _, err := v.Set(ctx, "OPEN", "open-value-1"); err != nil {
		t.Fatal(err)
	}
	// Hosts alone need an existing variable; a bad host names itself.
	none := []string{"a.example"}
	if _, err := v.Update(ctx, "MISSING", Change{Hosts: &none}); !errors.Is(err, fault.ErrNotFound) || !strings.Contains(err.Error(), "give its value too") {
		t.Fatalf("hosts of a missing variable: %v", err)
	}
	bad := []string{"https://x.example/"}
	if _, err := v.Update(ctx, "GH", Change{Hosts: &bad}); err == nil || !strings.Contains(err.Error(), "hosts of GH: host \"https://x.example/\"") {
		t.Fatalf("bad host: %v", err)
	}

	// Stored: a second opening reads them, List shows them.
	v2, err := NewVariables(db, box, "ws1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := v2.Hosts("GH"); !reflect.DeepEqual(got, []string{"api.github.com", "*.githubusercontent.com"}) {
		t.Fatalf("reopened hosts = %q", got)
	}
	list, err := v2.List(ctx)
	if err != nil || len(list) != 2 || len(list[0].Hosts) != 2 || list[1].Hosts == nil || len(list[1].Hosts) != 0 {
		t.Fatalf("List = %+v, %v; want GH with 2 hosts, OPEN with []", list, err)
	}

	// CheckSend: bound variables go only to their hosts; others anywhere.
	texts := []string{"Bearer ${GH}", "${OPEN}"}
	for _, h := range []string{"api.github.com", "raw.githubusercontent.com:443", "githubusercontent.com"} {
		if err := v2.CheckSend(texts, h); err != nil {
			t.Errorf("CheckSend to %s: %v", h, err)
		}
	}
	err = v2.CheckSend(texts, "api.github.com", "evil.example:8080")
	want := "the variable GH may only be sent to api.github.com, *.githubusercontent.com, and this would send it to evil.example: nothing was sent"
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("CheckSend to evil.example = %v; want %q", err, want)
	}
	if err := v2.CheckSend([]string{"${OPEN} $${GH}"}, "evil.example"); err != nil {
		t.Fatalf("an unbound variable and an escaped reference: %v", err)
	}
	if err := v2.CheckSend(texts); err != nil {
		t.Fatalf("no destination: %v", err)
	}

	// Clearing the hosts frees it.
	empty := []string{}
	if _, err := v2.Update(ctx, "GH", Change{Hosts: &empty}); err != nil {
		t.Fatal(err)
	}
	if err := v2.CheckSend(texts, "evil.example"); err != nil {
		t.Fatalf("after clearing: %v", err)
	}
}

func TestVariablesHostBound(t *testing.T) {
	ctx := context.Background()
	v, err := NewVariables(storetest.Open(t), testBox(t, 1), "ws1", nil)
	if err != nil {
		t.Fatal(err)
	}
	hosts := []string{"api.example.com"}
	for _, name := range []string{"BOUND", "ALSO"} {
		value := "value-of-" + name
		if _, err := v.Update(ctx, name, Change{Value: &value, Hosts: &hosts}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := v.Set(ctx, "OPEN", "open-value-1"); err != nil {
		t.Fatal(err)
	}
	got := v.HostBound([]string{"${OPEN} ${ALSO} $${BOUND} $BOUND", "${BOUND} ${ALSO} ${NOPE}"})
	if want := []string{"ALSO", "BOUND"}; !reflect.DeepEqual(got, want) {
		t.Errorf("HostBound = %q, want %q (each once, unbound, literal and unknown left out)", got, want)
	}
	if got := v.HostBound([]string{"echo ${OPEN}"}); len(got) != 0 {
		t.Errorf("HostBound of an unbound variable = %q, want none", got)
	}
}
