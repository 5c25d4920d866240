package connector

import (
	"strings"
	"testing"
)

func allRuntimes(string) bool { return true }

// FuzzReadRegistry: whatever a registry answers, the reader never panics,
// and what it would install references only the variables it declares,
// named after the app, and never an argument a shell would read.
func FuzzReadRegistry(f *testing.F) {
	f.Add(`{"servers":[{"server":{"name":"io.github.a/b","description":"x","packages":[{"registryType":"npm","identifier":"b","version":"1.0.0","environmentVariables":[{"name":"API_KEY","isSecret":true,"isRequired":true}]}]}}],"metadata":{"nextCursor":"c"}}`)
	f.Add(`{"servers":[{"server":{"name":"io.x/y","remotes":[{"type":"streamable-http","url":"https://x.example/mcp","headers":[{"name":"Authorization","value":"Bearer {token}","isSecret":true}]}]}}]}`)
	f.Add(`{"servers":[{"server":{"name":"io.x/../y","packages":[{"registryType":"npm","identifier":"../../etc","packageArguments":[{"type":"positional","value":"$(rm -rf ~)"}]}]}}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		list, _, err := readRegistryList(strings.NewReader(body))
		if err != nil {
			return
		}
		r := NewRegistry(RegistryConfig{URL: "off", Runtimes: allRuntimes})
		for _, s := range list {
			a := r.App(s)
			if a.Needs != "" {
				continue
			}
			refs, err := a.Transport.references()
			if err != nil {
				t.Fatalf("bad references in %+v: %v", a.Transport, err)
			}
			prefix := varPrefix(registrySlug(a.ID))
			for _, ref := range refs {
				if !strings.HasPrefix(ref, prefix) {
					t.Fatalf("%s references %s outside its prefix %s", a.ID, ref, prefix)
				}
			}
			if a.Transport.Type == TransportStdio {
				if a.Transport.Command != "npx" && a.Transport.Command != "uvx" {
					t.Fatalf("command %q", a.Transport.Command)
				}
				for _, arg := range a.Transport.Args[1:] {
					if strings.ContainsAny(strings.ReplaceAll(strings.ReplaceAll(arg, "${", ""), "}", ""), "`;|&<>()\n") {
						t.Fatalf("argument %q", arg)
					}
				}
			}
			if len(a.Description) > maxRegistryText+8 {
				t.Fatalf("description of %d bytes", len(a.Description))
			}
		}
	})
}

func TestRegistryHostileEntries(t *testing.T) {
	body := `{"servers":[
	 {"server":{"name":"io.x/../y"}},
	 {"server":{"name":"io.x/pathy","packages":[{"registryType":"npm","identifier":"../../etc/passwd"}]}},
	 {"server":{"name":"io.x/shelly","packages":[{"registryType":"npm","identifier":"ok","packageArguments":[{"type":"positional","value":"$(touch /tmp/x)"}]}]}},
	 {"server":{"name":"io.x/refs","packages":[{"registryType":"npm","identifier":"ok","environmentVariables":[{"name":"X","value":"${GITHUB_TOKEN}"}]}]}},
	 {"server":{"name":"io.x/docker","packages":[{"registryType":"oci","identifier":"x/y"}]}},
	 {"server":{"name":"io.x/good","description":"` + strings.Repeat("long ", 2000) + `","packages":[{"registryType":"npm","identifier":"@scope/good","version":"1.2.3","environmentVariables":[{"name":"API_KEY","isSecret":true,"isRequired":true}]}]}}
	]}`
	list, _, err := readRegistryList(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 5 {
		t.Fatalf("kept %d servers, want 5 (the ../ name dropped)", len(list))
	}
	r := NewRegistry(RegistryConfig{URL: "off", Runtimes: allRuntimes})
	if refs := r.App(list[2]).Transport.Env["X"]; refs != "${REFS_X}" {
		t.Errorf("a ${GITHUB_TOKEN} value became %q, want the app's own variable", refs)
	}
	for _, s := range []ServerJSON{list[0], list[1], list[3]} {
		if a := r.App(s); a.Needs == "" {
			t.Errorf("%s installs: %+v", s.Name, a.Transport)
		}
	}
	good := r.App(list[4])
	if good.Needs != "" || strings.Join(good.Transport.Args, " ") != "-y @scope/good@1.2.3" || good.Transport.Env["API_KEY"] != "${GOOD_API_KEY}" {
		t.Fatalf("good: needs %q, transport %+v", good.Needs, good.Transport)
	}
	if len(good.Description) > maxRegistryText+8 {
		t.Fatalf("description not bounded: %d", len(good.Description))
	}
}
