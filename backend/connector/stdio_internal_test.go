package connector

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rerun-build/rerun-desktop/backend/connector/connectortest"
)

// A request to a server that died is reported as never sent — whether the
// transport already saw the server's stdout end or the write hit a broken
// pipe — so Call may send it again to a new process.
func TestStdioRequestToADeadServerIsNotSent(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 5 {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), connectortest.StdioEnv+"=1")
		tr := newStdioTransport(cmd, &tail{max: 1 << 10})
		if err := tr.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		ping := func(id int64) error {
			_, err := tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id), Method: "ping"})
			return err
		}
		if err := ping(1); err != nil {
			t.Fatalf("round %d: ping the live server: %v", i, err)
		}
		connectortest.Kill(t, cmd.Process.Pid)
		err := ping(2)
		var notSent *notSentError
		if !errors.As(err, &notSent) || !reopenable(err) {
			t.Fatalf("round %d: got %v, want a request that was not sent", i, err)
		}
	}
}
