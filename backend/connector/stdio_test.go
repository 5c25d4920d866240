package connector_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/connector/connectortest"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

// everythingServer is the npm package @modelcontextprotocol/server-everything
// as installed for the benchmarks (npm ci in build/bench-mcp).
func everythingServer(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the process checks read /proc: Linux only")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the stdio tests run a real MCP server from npm")
	}
	path, err := filepath.Abs("../../build/bench-mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Skip("@modelcontextprotocol/server-everything is not installed: run npm ci in build/bench-mcp")
	}
	return path
}

// installEverything registers the server as a custom stdio server started
// through sh beside a sleep that ignores stdin: only killing the process
// group ends that one.
func installEverything(t *testing.T, f *fixture, path string) (connector.Connector, string) {
	t.Helper()
	marker := randomHex()
	f.set(t, "EVERYTHING_MARKER", marker)
	inst, err := f.svc.AddCustom(context.Background(), agentA, connector.Custom{
		Name:    "Everything",
		Command: "sh",
		Args:    []string{"-c", `sleep 600 & node "$0" stdio; echo "server exited" >&2`, path},
		Env:     map[string]string{"EVERYTHING_MARKER": "${EVERYTHING_MARKER}"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return inst.Connector, marker
}

func randomHex() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func TestStdioServerFromNPM(t *testing.T) {
	path := everythingServer(t)
	ctx := context.Background()
	f := newFixture(t, connector.Config{})
	c, marker := installEverything(t, f, path)

	tools, err := f.svc.Tools(ctx, agentA)
	if err != nil {
		t.Fatal(err)
	}
	echo := findTool(t, tools, "everything__echo")
	out, err := echo.Run(ctx, &tool.Env{AgentID: agentA}, json.RawMessage(`{"message":"hello from rerun"}`))
	if err != nil || out != "Echo: hello from rerun" {
		t.Fatalf("echo: got %q, %v", out, err)
	}
	// ${EVERYTHING_MARKER} was resolved into the server's environment, and
	// the app's own environment was not passed on.
	t.Setenv("RERUN_TEST_SECRET", "must-not-leak")
	env, err := findTool(t, tools, "everything__get_env").Run(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(env, `"EVERYTHING_MARKER": "`+marker+`"`) {
		t.Errorf("get-env does not show the resolved variable: %.300s", env)
	}
	if strings.Contains(env, "RERUN_KEYCHAIN") {
		t.Errorf("the app's environment leaked into the server: %.300s", env)
	}
	if pic, err := findTool(t, tools, "everything__get_tiny_image").Run(ctx, nil, nil); err != nil || !strings.Contains(pic, "[image: image/png") {
		t.Errorf("tiny image: got %q, %v", pic, err)
	}
	if got := connectortest.Processes(t, "EVERYTHING_MARKER", marker); len(got) < 3 {
		t.Fatalf("found %d server processes, want sh, sleep and node", len(got))
	}

	// Uninstall ends the whole process group.
	if err := f.svc.Uninstall(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	connectortest.WaitNoProcesses(t, "EVERYTHING_MARKER", marker)
	if tools, _ := f.svc.Tools(ctx, agentA); len(tools) != 0 {
		t.Errorf("after uninstall: %d tools", len(tools))
	}
}

func TestStdioProcessesEndWithClose(t *testing.T) {
	path := everythingServer(t)
	ctx := context.Background()
	f := newFixture(t, connector.Config{})
	_, marker := installEverything(t, f, path)
	tools, err := f.svc.Tools(ctx, agentA)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := findTool(t, tools, "everything__echo").Run(ctx, nil, json.RawMessage(`{"message":"x"}`)); err != nil {
		t.Fatal(err)
	}
	f.svc.Close()
	connectortest.WaitNoProcesses(t, "EVERYTHING_MARKER", marker)
	if _, err := findTool(t, tools, "everything__echo").Run(ctx, nil, json.RawMessage(`{"message":"x"}`)); err == nil {
		t.Error("a call after Close succeeded")
	}
}

func TestStdioIdleCloseAndReconnect(t *testing.T) {
	path := everythingServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	f := newFixture(t, connector.Config{IdleTimeout: time.Second})
	served := make(chan error, 1)
	go func() { served <- f.svc.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-served })
	_, marker := installEverything(t, f, path)

	tools, err := f.svc.Tools(ctx, agentA)
	if err != nil {
		t.Fatal(err)
	}
	echo := findTool(t, tools, "everything__echo")
	if _, err := echo.Run(ctx, nil, json.RawMessage(`{"message":"one"}`)); err != nil {
		t.Fatal(err)
	}
	// Left idle, the server is stopped…
	connectortest.WaitNoProcesses(t, "EVERYTHING_MARKER", marker)
	// …and the next call starts it again.
	if out, err := echo.Run(ctx, nil, json.RawMessage(`{"message":"two"}`)); err != nil || out != "Echo: two" {
		t.Fatalf("after idle: got %q, %v", out, err)
	}

	// A server that dies is restarted on the next call.
	pids := connectortest.Processes(t, "EVERYTHING_MARKER", marker)
	if len(pids) == 0 {
		t.Fatal("no server process after the call")
	}
	connectortest.Kill(t, pids...)
	if out, err := echo.Run(ctx, nil, json.RawMessage(`{"message":"three"}`)); err != nil || out != "Echo: three" {
		t.Fatalf("after the server died: got %q, %v", out, err)
	}
}

// installTestServer registers this test binary as a stdio server (the
// echo and crash tools of connectortest). Its processes carry the returned
// marker value in their environment, and append each call they receive to
// the returned call log.
func installTestServer(t *testing.T, f *fixture) (marker, callLog string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	marker, callLog = randomHex(), filepath.Join(t.TempDir(), "calls")
	// Named in the server's env, the log is one of the files its sandbox
	// lets it write.
	if err := os.WriteFile(callLog, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.AddCustom(context.Background(), agentA, connector.Custom{
		Name: "Test server", Command: exe,
		Env: map[string]string{connectortest.StdioEnv: "1", "TEST_SERVER_MARKER": marker, connectortest.CallLogEnv: callLog},
	}); err != nil {
		t.Fatal(err)
	}
	return marker, callLog
}

// onlyProcess is the pid of the one live process of the server.
func onlyProcess(t *testing.T, marker string) int {
	t.Helper()
	pids := connectortest.Processes(t, "TEST_SERVER_MARKER", marker)
	if len(pids) != 1 {
		t.Fatalf("found server processes %v, want one", pids)
	}
	return pids[0]
}

// A server killed between calls is started again by the next call, which
// reaches the new process once: the request the dead one could not read
// (a broken pipe, or a transport already closed) is sent to the new one.
func TestStdioServerKilledBetweenCallsStartsAgain(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, connector.Config{})
	marker, callLog := installTestServer(t, f)
	tools, err := f.svc.Tools(ctx, agentA)
	if err != nil {
		t.Fatal(err)
	}
	echo := findTool(t, tools, "test_server__echo")
	var want []string
	prev := 0
	for i := range 4 {
		if i > 0 {
			connectortest.Kill(t, prev)
		}
		msg := fmt.Sprintf("call %d", i)
		if out, err := echo.Run(ctx, nil, json.RawMessage(`{"message":"`+msg+`"}`)); err != nil || out != "echo: "+msg {
			t.Fatalf("call %d: got %q, %v; want echo: %s", i, out, err, msg)
		}
		pid := onlyProcess(t, marker)
		if pid == prev {
			t.Fatalf("call %d ran on the killed process %d", i, pid)
		}
		prev = pid
		want = append(want, fmt.Sprintf("echo %d", pid))
	}
	if got := connectortest.CallLog(t, callLog); !slices.Equal(got, want) {
		t.Errorf("the servers received %q, want %q: one call each", got, want)
	}
}

// A server that dies after it read the request may have acted on it: the
// call says it was interrupted and is not sent again; the next call starts
// a new process.
func TestStdioServerDyingMidCallIsInterrupted(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, connector.Config{})
	marker, callLog := installTestServer(t, f)
	tools, err := f.svc.Tools(ctx, agentA)
	if err != nil {
		t.Fatal(err)
	}
	first := onlyProcess(t, marker)
	_, err = findTool(t, tools, "test_server__crash").Run(ctx, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("got %v, want an error saying the call was interrupted", err)
	}
	if got, want := connectortest.CallLog(t, callLog), []string{fmt.Sprintf("crash %d", first)}; !slices.Equal(got, want) {
		t.Fatalf("the servers received %q, want %q: an interrupted call is not sent again", got, want)
	}
	if out, err := findTool(t, tools, "test_server__echo").Run(ctx, nil, json.RawMessage(`{"message":"after"}`)); err != nil || out != "echo: after" {
		t.Fatalf("after the crash: got %q, %v; want echo: after", out, err)
	}
	if pid := onlyProcess(t, marker); pid == first {
		t.Errorf("the call after the crash ran on process %d, the one that exited", pid)
	}
}

func TestStdioCommandNotFoundIsAnError(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, connector.Config{})
	inst, err := f.svc.AddCustom(ctx, agentA, connector.Custom{Name: "nothing", Command: "rerun-no-such-mcp-server"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Test(ctx, inst.Connector.ID); err == nil || !strings.Contains(err.Error(), "rerun-no-such-mcp-server") {
		t.Fatalf("got %v, want an error naming the missing command", err)
	}
	c, _ := f.svc.Get(ctx, inst.Connector.ID)
	if c.Status != connector.StatusError {
		t.Errorf("got status %q, want error", c.Status)
	}
	// A server that exits at once says why, from its stderr.
	inst, err = f.svc.AddCustom(ctx, agentA, connector.Custom{Name: "crash", Command: "sh", Args: []string{"-c", "echo 'missing config file' >&2; exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Test(ctx, inst.Connector.ID); err == nil || !strings.Contains(err.Error(), "missing config file") {
		t.Errorf("got %v, want the server's stderr in the error", err)
	}
}
