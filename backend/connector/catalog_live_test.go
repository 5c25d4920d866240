package connector_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/connector"
)

// TestCatalogPackagesStillPublished asks npm and PyPI whether every
// built-in app's package is still there and not deprecated, the way a
// catalog rots: a reference server archived, a package renamed. It needs
// the network, so it runs only with RERUN_CHECK_CATALOG=1 (make
// check-catalog).
func TestCatalogPackagesStillPublished(t *testing.T) {
	if os.Getenv("RERUN_CHECK_CATALOG") != "1" {
		t.Skip("set RERUN_CHECK_CATALOG=1 to ask npm and PyPI about the built-in packages")
	}
	cat, err := connector.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	for _, a := range cat.Apps {
		tr := a.Transport
		if tr.Type != connector.TransportStdio {
			continue
		}
		pkg := firstPackage(tr.Args)
		t.Run(a.ID, func(t *testing.T) {
			switch tr.Command {
			case "npx":
				checkNPM(t, client, pkg)
			case "uvx":
				checkPyPI(t, client, pkg)
			default:
				t.Skipf("command %q is not a package runner", tr.Command)
			}
		})
	}
}

// firstPackage is the first argument that is not a flag, without its
// version: what npx or uvx fetches.
func firstPackage(args []string) string {
	for _, a := range args {
		if a == "" || strings.HasPrefix(a, "-") {
			continue
		}
		a, _, _ = strings.Cut(a, "==")
		if i := strings.LastIndex(a, "@"); i > 0 {
			a = a[:i]
		}
		return a
	}
	return ""
}

func checkNPM(t *testing.T, c *http.Client, pkg string) {
	var doc struct {
		DistTags map[string]string `json:"dist-tags"`
		Versions map[string]struct {
			Deprecated string `json:"deprecated"`
		} `json:"versions"`
	}
	get(t, c, "https://registry.npmjs.org/"+url.PathEscape(pkg), &doc)
	latest := doc.DistTags["latest"]
	if latest == "" {
		t.Fatalf("npm package %s has no latest version", pkg)
	}
	if d := doc.Versions[latest].Deprecated; d != "" {
		t.Errorf("npm package %s@%s is deprecated: %s", pkg, latest, d)
	}
}

func checkPyPI(t *testing.T, c *http.Client, pkg string) {
	var doc struct {
		Info struct {
			Version string `json:"version"`
			Yanked  bool   `json:"yanked"`
		} `json:"info"`
	}
	get(t, c, "https://pypi.org/pypi/"+url.PathEscape(pkg)+"/json", &doc)
	if doc.Info.Version == "" || doc.Info.Yanked {
		t.Errorf("PyPI package %s: latest %q, yanked %v", pkg, doc.Info.Version, doc.Info.Yanked)
	}
}

func get(t *testing.T, c *http.Client, u string, v any) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		if strings.Contains(u, "pypi.org") {
			t.Skipf("PyPI cannot be reached from here: %v", err)
		}
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s (is the package gone or renamed?)", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(fmt.Errorf("%s: %w", u, err))
	}
}
