package relay_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/internal/waittest"
	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// relayProcesses builds rerun-relay, links a workspace in the PostgreSQL
// store at u with the hashes of tokens, and starts n relay processes on it
// until the benchmark ends; it returns their URLs.
func relayProcesses(b *testing.B, u string, n int, tokens ...string) []string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "rerun-relay")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/rerun-relay").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "-postgres", u, "-new-workspace").Output()
	if err != nil {
		b.Fatalf("rerun-relay -new-workspace: %v", err)
	}
	var l protocol.Link
	if _, err := fmt.Sscanf(string(out), "workspace %s\nsecret %s\n", &l.WorkspaceID, &l.Secret); err != nil {
		b.Fatalf("rerun-relay -new-workspace printed %q: %v", out, err)
	}
	var urls []string
	for range n {
		cmd := exec.Command(bin, "-postgres", u, "-listen", "127.0.0.1:0")
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		line := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(stdout)
			sc.Scan()
			line <- sc.Text()
			for sc.Scan() {
			}
		}()
		select {
		case l := <-line:
			rest, ok := strings.CutPrefix(l, "rerun-relay listening on ")
			if !ok {
				b.Fatalf("rerun-relay printed %q", l)
			}
			url, _, _ := strings.Cut(rest, " ")
			urls = append(urls, url)
		case <-time.After(waittest.Patience):
			b.Fatal("rerun-relay did not start")
		}
	}
	var hashes []string
	for _, t := range tokens {
		hashes = append(hashes, protocol.TokenHash(t))
	}
	body, _ := json.Marshal(protocol.Tokens{Hashes: hashes})
	req, _ := http.NewRequest(http.MethodPut, urls[0]+protocol.WorkspacePath(l.WorkspaceID, protocol.PathTokens), bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+l.Secret)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusNoContent {
		b.Fatalf("register tokens: %v %v", res, err)
	}
	res.Body.Close()
	return urls
}
