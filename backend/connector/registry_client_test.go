package connector_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/connector/registrytest"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

func everyRuntime(string) bool { return true }

// weatherServers are n registry servers named io.github.test/weather-NN.
func weatherServers(n int) []map[string]any {
	var out []map[string]any
	for i := range n {
		out = append(out, registrytest.NPM(fmt.Sprintf("io.github.test/weather-%02d", i), "Forecasts for a city.", fmt.Sprintf("weather-mcp-%02d", i), "1.0.0"))
	}
	return out
}

func TestRegistrySearchFollowsPagesAndWorksOffline(t *testing.T) {
	ctx := context.Background()
	fake := registrytest.New(t, weatherServers(70)...)
	cache := filepath.Join(t.TempDir(), "mcp-registry.json")
	f := newFixture(t, connector.Config{})
	f.svc.SetRegistry(connector.NewRegistry(connector.RegistryConfig{URL: fake.URL, CacheFile: cache, Runtimes: everyRuntime}))

	res := f.svc.SearchApps(ctx, "weather", 50)
	if len(res.Apps) != 50 {
		t.Fatalf("got %d apps, want 50", len(res.Apps))
	}
	if lists, paged := fake.Lists(); lists < 2 || paged < 1 {
		t.Errorf("%d list requests, %d with a cursor: the search did not follow the registry's pages", lists, paged)
	}
	seen := map[string]bool{}
	for _, a := range res.Apps {
		if a.Source != connector.SourceRegistry || seen[a.ID] {
			t.Fatalf("app %s: source %q, seen before %v", a.ID, a.Source, seen[a.ID])
		}
		seen[a.ID] = true
	}
	first := res.Apps[0]
	if first.Needs != "" || first.Transport.Command != "npx" || strings.Join(first.Transport.Args, " ") != "-y weather-mcp-00@1.0.0" {
		t.Errorf("first app installs as %+v (needs %q)", first.Transport, first.Needs)
	}
	if !strings.Contains(first.Skill, "not reviewed by Rerun") {
		t.Errorf("drafted skill does not say it is not reviewed:\n%s", first.Skill)
	}
	if res.Registry.Offline || res.Registry.URL != fake.URL {
		t.Errorf("status %+v", res.Registry)
	}

	// The registry goes away: the catalog answers from the cache and says
	// how old it is — also after a restart, from the cache file.
	fake.SetDown(true)
	res = f.svc.SearchApps(ctx, "weather-0", 50)
	if !res.Registry.Offline || res.Registry.CachedAt == nil || res.Registry.Error == "" {
		t.Fatalf("offline status %+v", res.Registry)
	}
	if len(res.Apps) != 10 {
		t.Errorf("offline search for weather-0 found %d apps, want the 10 cached", len(res.Apps))
	}
	restarted := connector.NewRegistry(connector.RegistryConfig{URL: fake.URL, CacheFile: cache, Runtimes: everyRuntime})
	f.svc.SetRegistry(restarted)
	if res = f.svc.SearchApps(ctx, "weather-0", 50); len(res.Apps) != 10 || !res.Registry.Offline {
		t.Errorf("after a restart, offline: %d apps, status %+v", len(res.Apps), res.Registry)
	}
	if _, ok, err := f.svc.FindApp(ctx, "io.github.test/weather-03"); !ok || err != nil {
		t.Errorf("a cached server is found offline: %v %v", ok, err)
	}
	// Another registry's cache is not shown for this one.
	other := registrytest.New(t)
	other.SetDown(true)
	if err := restarted.SetURL(other.URL); err != nil {
		t.Fatal(err)
	}
	if res = f.svc.SearchApps(ctx, "weather", 50); len(res.Apps) != 0 || res.Registry.CachedAt != nil {
		t.Errorf("another registry shows this one's cache: %d apps, %+v", len(res.Apps), res.Registry)
	}
	// Off: only the built-in catalog, and no request at all.
	if err := restarted.SetURL("off"); err != nil {
		t.Fatal(err)
	}
	if res = f.svc.SearchApps(ctx, "github", 50); res.Registry.URL != "" || len(res.Apps) == 0 || res.Apps[0].Source != connector.SourceBuiltin {
		t.Errorf("registry off: %+v", res)
	}
	if err := restarted.SetURL("ftp://registry.example"); err == nil || !strings.Contains(err.Error(), "https://") {
		t.Errorf("a non-https registry URL: %v", err)
	}
}

func TestRegistryBuiltinsComeFirstAndStandForTheirServers(t *testing.T) {
	ctx := context.Background()
	fake := registrytest.New(t,
		registrytest.NPM("io.github.makenotion/notion-mcp-server", "Notion's official server.", "@notionhq/notion-mcp-server", "1.9.0"),
		registrytest.NPM("io.github.someone/notion-tasks", "Tasks in Notion.", "notion-tasks-mcp", "0.3.0"),
		map[string]any{"name": "io.github.someone/notion-docker", "description": "Notion in a container.",
			"packages": []any{map[string]any{"registryType": "oci", "identifier": "docker.io/someone/notion:1"}}},
	)
	f := newFixture(t, connector.Config{})
	f.svc.SetRegistry(connector.NewRegistry(connector.RegistryConfig{URL: fake.URL, Runtimes: everyRuntime}))
	res := f.svc.SearchApps(ctx, "notion", 50)
	var ids []string
	for _, a := range res.Apps {
		ids = append(ids, a.ID)
	}
	if len(ids) != 3 || ids[0] != "notion" || ids[1] != "io.github.someone/notion-tasks" || ids[2] != "io.github.someone/notion-docker" {
		t.Fatalf("got %v: want the built-in notion, then the two registry servers that are not it", ids)
	}
	if needs := res.Apps[2].Needs; !strings.Contains(needs, "Docker") {
		t.Errorf("the OCI server's needs: %q", needs)
	}
	if _, err := f.svc.Install(ctx, agentA, "io.github.someone/notion-docker"); err == nil || !strings.Contains(err.Error(), "Docker") {
		t.Errorf("installing what cannot run here: %v", err)
	}
	if _, err := f.svc.Install(ctx, agentA, "io.github.someone/absent"); err == nil || !strings.Contains(err.Error(), "no server") {
		t.Errorf("installing a server the registry does not have: %v", err)
	}
}

// TestInstallRegistryServerFromNPM finds a real npm MCP server through the
// fake registry, installs it from its metadata (npx -y package@version) and
// calls one of its tools. npx fetches the package from the npm registry
// (from npm's cache after the benchmarks' npm ci), so it is skipped when
// that cannot be reached.
func TestInstallRegistryServerFromNPM(t *testing.T) {
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx is not installed")
	}
	version := everythingVersion(t)
	if err := npmReachable(); err != nil {
		t.Skipf("the npm registry cannot be reached (%v): npx cannot fetch the server", err)
	}
	ctx := context.Background()
	name := "io.github.modelcontextprotocol/server-everything"
	srv := registrytest.NPM(name, "The MCP reference server that exercises every feature.", "@modelcontextprotocol/server-everything", version)
	srv["title"] = "Everything"
	srv["icons"] = []any{map[string]any{"src": "https://example.com/icon.png", "mimeType": "image/png"}}
	fake := registrytest.New(t, srv)
	// The built-in catalog has server-everything too (and then stands for
	// it): this one is without it.
	cat, err := connector.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	cat.Apps = slices.DeleteFunc(cat.Apps, func(a connector.App) bool { return a.ID == "everything" })
	f := newFixtureCatalog(t, connector.Config{ConnectTimeout: 5 * time.Minute}, cat)
	f.svc.SetRegistry(connector.NewRegistry(connector.RegistryConfig{URL: fake.URL}))

	found := f.svc.SearchApps(ctx, "everything", 10)
	var app connector.App
	for _, a := range found.Apps {
		if a.ID == name {
			app = a
		}
	}
	if app.ID == "" || app.Needs != "" {
		t.Fatalf("the registry's server-everything is not installable: %+v", found.Apps)
	}
	inst, err := f.svc.Install(ctx, agentA, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	c := inst.Connector
	if c.Source != connector.SourceRegistry || c.CatalogID != name || c.Icon != "https://example.com/icon.png" || inst.Form != nil {
		t.Fatalf("installed %+v, form %+v", c, inst.Form)
	}
	if c.Transport.Command != "npx" || strings.Join(c.Transport.Args, " ") != "-y @modelcontextprotocol/server-everything@"+version {
		t.Fatalf("runs as %s %v", c.Transport.Command, c.Transport.Args)
	}
	tools, err := f.svc.Tools(ctx, agentA)
	if err != nil {
		t.Fatal(err)
	}
	echo := findTool(t, tools, "everything__echo")
	out, err := echo.Run(ctx, &tool.Env{AgentID: agentA}, json.RawMessage(`{"message":"found in the registry"}`))
	if err != nil || out != "Echo: found in the registry" {
		t.Fatalf("echo: %q, %v", out, err)
	}
	// Its tools were pinned at the first connection, like any app's, and
	// the drafted skill now lists them.
	got, err := f.svc.Get(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.PinnedAt == nil || !strings.Contains(got.Skill, "`everything__echo`") || !strings.Contains(got.Skill, "not reviewed by Rerun") {
		t.Errorf("pinned %v, skill:\n%s", got.PinnedAt, got.Skill)
	}
	if err := f.svc.Uninstall(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
}

// everythingVersion is the server-everything version the benchmarks pin.
func everythingVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../build/bench-mcp/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		DevDependencies map[string]string `json:"devDependencies"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	v := pkg.DevDependencies["@modelcontextprotocol/server-everything"]
	if v == "" {
		t.Fatal("build/bench-mcp/package.json pins no server-everything")
	}
	return v
}

func npmReachable() error {
	c := http.Client{Timeout: 15 * time.Second}
	resp, err := c.Get("https://registry.npmjs.org/-/ping")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("ping answered %s", resp.Status)
	}
	return nil
}
