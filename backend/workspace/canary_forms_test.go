package workspace_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/tool"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// recordingProxy stands between the app and the fake model server and
// keeps every byte of every request: request line, headers and body.
type recordingProxy struct {
	srv *httptest.Server
	mu  sync.Mutex
	raw bytes.Buffer // headers and bodies
	bod bytes.Buffer // bodies only
}

func newRecordingProxy(t *testing.T, target string) *recordingProxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &recordingProxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		head, _ := httputil.DumpRequest(r, false)
		p.mu.Lock()
		p.raw.Write(head)
		p.raw.Write(body)
		p.bod.Write(body)
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *recordingProxy) bytes() (raw, bodies []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return bytes.Clone(p.raw.Bytes()), bytes.Clone(p.bod.Bytes())
}

// canaryForms are the forms a value of the canary test may take in what
// the model gets, by name; each is also what the commands print. The
// encodings are those of Go's standard library, checked against what
// Python and Node print in the command.
func canaryForms(v string) map[string]string {
	b := []byte(v)
	j1, _ := json.Marshal(v)
	j2, _ := json.Marshal(string(j1))
	j3, _ := json.Marshal(string(j2))
	trim := func(s []byte) string { return strings.Trim(string(s), `"`) }
	return map[string]string{
		"raw": v, "base64": base64.StdEncoding.EncodeToString(b), "base64url": base64.URLEncoding.EncodeToString(b),
		"base64 unpadded": base64.RawStdEncoding.EncodeToString(b),
		"query":           url.QueryEscape(v), "path": url.PathEscape(v), "percent %20": strings.ReplaceAll(url.QueryEscape(v), "+", "%20"),
		"json": trim(j1), "json twice": trim(j2), "json three times": trim(j3),
		"hex": hex.EncodeToString(b), "HEX": strings.ToUpper(hex.EncodeToString(b)),
	}
}

// TestSecretsCanaryEveryForm has an agent print 20 variables and the app's
// own provider key in every form the redactor knows, through Python and
// Node as well as the shell, cut by the output caps and read_file's pages,
// and looks for the values in every byte that went to the model (through a
// recording proxy), every file of the data directory and the log.
func TestSecretsCanaryEveryForm(t *testing.T) {
	for _, prog := range []string{"python3", "node", "base64", "fold"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s is not installed", prog)
		}
	}
	dir := t.TempDir()
	logPath := filepath.Join(t.TempDir(), "rerun.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	fake := llmtest.New(t)
	proxy := newRecordingProxy(t, fake.URL())
	rng := rand.New(rand.NewPCG(17, 19))
	// Every character the encodings treat differently, a space and a quote.
	const alphabet = `ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+&="<>? '~!*()-_.`
	random := func(n int) string {
		v := make([]byte, n)
		for j := range v {
			v[j] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(v)
	}
	appKey := "sk-proj-" + strings.NewReplacer(" ", "x", "'", "y", `"`, "z").Replace(random(40))
	ctx := context.Background()
	h, err := workspace.Open(ctx, workspace.Config{DataDir: dir, Logger: slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelDebug})),
		LLM: llm.Config{OpenAIKey: appKey, OpenAIBaseURL: proxy.srv.URL + "/v1"}})
	if err != nil {
		t.Fatal(err)
	}
	serveCtx, stop := context.WithCancel(ctx)
	served := make(chan struct{})
	go func() { h.Serve(serveCtx); close(served) }()
	defer func() { stop(); <-served; h.Close() }()
	w, err := h.Workspace(h.Current())
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{}
	env := map[string]string{}
	for i := range 20 {
		name := fmt.Sprintf("CANARY_%02d", i)
		values[name] = random(16 + rng.IntN(25))
		if _, err := w.Variables.Set(ctx, name, values[name]); err != nil {
			t.Fatal(err)
		}
		env[fmt.Sprintf("V%02d", i)] = "${" + name + "}"
	}
	a, err := w.Agents.Create(ctx, agent.NewAgent{Name: "Leaky", BoxID: firstBox(t, w), Capabilities: []string{"shell", "files", "database"},
		AskFirst: map[string]bool{"shell": false}})
	if err != nil {
		t.Fatal(err)
	}
	// The app's own key, where a command can read it (as it could in
	// /proc/<app>/environ without a sandbox).
	files := filepath.Join(w.Agents.Dir(a.ID), "files")
	os.MkdirAll(files, 0o700)
	os.WriteFile(filepath.Join(files, "app-key.txt"), []byte(appKey), 0o600)

	const python = `import os, json, base64, binascii, urllib.parse as u
for k in sorted(os.environ):
    if not (k.startswith("V") and k[1:].isdigit()) and k != "APPKEY": continue
    v = os.environ[k]
    b = v.encode()
    for f in (u.quote(v), u.quote(v, safe=""), u.quote_plus(v), json.dumps(v), json.dumps(json.dumps(v)),
              json.dumps(json.dumps(json.dumps(v))), json.dumps({"k": json.dumps({"k": v})}), b.hex(), b.hex().upper(),
              base64.b64encode(b).decode(), base64.urlsafe_b64encode(b).decode(), base64.b64encode(b).decode().rstrip("="),
              base64.b64encode(b"x" + b).decode(), base64.b64encode(b"xy" + b).decode()):
        print(k, f)
`
	const node = `for (const k of Object.keys(process.env).sort()) {
  if (!/^V\d+$/.test(k) && k !== 'APPKEY') continue;
  const v = process.env[k];
  for (const f of [encodeURIComponent(v), encodeURI(v), new URLSearchParams({k: v}).toString(), JSON.stringify(v),
      JSON.stringify(JSON.stringify(v)), JSON.stringify(JSON.stringify(JSON.stringify(v)))]) console.log(k, f);
}`
	os.WriteFile(filepath.Join(files, "forms.py"), []byte(python), 0o600)
	os.WriteFile(filepath.Join(files, "forms.js"), []byte(node), 0o600)
	var shell strings.Builder
	shell.WriteString(`export APPKEY="$(cat app-key.txt)"; python3 forms.py; node forms.js; `)
	for k := range env {
		fmt.Fprintf(&shell, `printf '%%s' "$%s" | base64; printf '%%s' "$%s" | fold -w 7; echo; printf '%%s' "$%s" | od -An -tx1 | tr -d ' \n'; echo; `, k, k, k)
	}
	shell.WriteString(`cat app-key.txt | base64`)
	// A value across the cut of the shell's 64 KiB head and tail, one
	// across the 32 KiB page of read_file.
	half := tool.MaxCommandOutput / 2
	cut := fmt.Sprintf(`head -c %d /dev/zero | tr '\0' a; printf '%%s' "$V07"; head -c %d /dev/zero | tr '\0' z`, half-len(values["CANARY_07"])/2, 2*half)
	page := strings.Repeat("p", tool.MaxReadBytes-10) + values["CANARY_08"] + strings.Repeat("q", 100)
	os.WriteFile(filepath.Join(files, "page.txt"), []byte(page), 0o600)

	// A value across the 8 KiB cut of a database cell, one across the cut
	// of a binary cell's hex.
	const cellCut = 8 << 10 // tool's maxCellBytes
	db, err := sql.Open("sqlite", filepath.Join(w.Agents.Dir(a.ID), "agent.db"))
	if err != nil {
		t.Fatal(err)
	}
	blob := append(bytes.Repeat([]byte{0xff}, cellCut/2-len(values["CANARY_10"])/2), values["CANARY_10"]...)
	if _, err := db.Exec(`CREATE TABLE cells (t TEXT, b BLOB)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO cells VALUES (?, ?)`, strings.Repeat("c", cellCut-len(values["CANARY_09"])/2)+values["CANARY_09"]+strings.Repeat("d", 100),
		append(blob, bytes.Repeat([]byte{0xfe}, 100)...)); err != nil {
		t.Fatal(err)
	}
	db.Close()

	call := func(id, name string, args map[string]any) llmtest.ToolCall {
		b, _ := json.Marshal(args)
		return llmtest.ToolCall{ID: id, Name: name, Args: string(b)}
	}
	fake.Script(llmtest.Tools(
		call("forms", "run_command", map[string]any{"command": shell.String(), "env": env}),
		call("cut", "run_command", map[string]any{"command": cut, "env": env}),
		call("page1", "read_file", map[string]any{"path": "page.txt"}),
		call("page2", "read_file", map[string]any{"path": "page.txt", "offset": tool.MaxReadBytes}),
		call("cells", "db_query", map[string]any{"sql": "SELECT t, b FROM cells"}),
	), llmtest.Text("Printed them."))
	sess, _ := w.Runs.ChatSession(ctx, a.ID)
	r, err := w.Runs.Start(ctx, a.ID, sess.ID, run.SourceChat, "print the canaries", run.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if r, err = w.Runs.Wait(waitCtx, r.ID); err != nil || r.Status != run.Done {
		t.Fatalf("run = %s %v %s", r.Status, err, r.Error)
	}
	raw, bodies := proxy.bytes()
	// Each value is printed in 23 forms; base64 and raw alone make 8 masks.
	if n := bytes.Count(bodies, []byte("[redacted:CANARY_")); n < 20*8 {
		t.Fatalf("the model saw %d masks, want at least 160: the commands did not print the values", n)
	}
	if !bytes.Contains(bodies, []byte("[redacted:OPENAI_API_KEY]")) {
		t.Error("the app's key was not masked: the command did not print it")
	}
	h.Close()
	stop()
	<-served
	logFile.Sync()

	values["OPENAI_API_KEY"] = appKey
	haystacks := map[string][]byte{"request bodies to the model": bodies}
	// Headers carry the app's key to the model server by design; every
	// other value must be missing from them too.
	haystacks["requests to the model, headers included"] = bytes.ReplaceAll(raw, []byte(appKey), nil)
	haystacks["log"], _ = os.ReadFile(logPath)
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.HasSuffix(p, "app-key.txt") && !strings.HasSuffix(p, "page.txt") && !strings.Contains(p, "agent.db") {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			haystacks[rel] = b
		}
		return nil
	})
	found := 0
	for where, b := range haystacks {
		flat := strings.NewReplacer("\n", "", "\r", "", `\n`, "").Replace(string(b))
		for name, v := range values {
			forms := canaryForms(v)
			forms["first half"], forms["second half"] = v[:len(v)/2], v[len(v)/2:]
			forms["hex first half"], forms["hex second half"] = hex.EncodeToString([]byte(v[:len(v)/2])), hex.EncodeToString([]byte(v[len(v)/2:]))
			for form, needle := range forms {
				if len(needle) >= 8 && strings.Contains(flat, needle) {
					found++
					t.Errorf("%s holds %s of %s", where, form, name)
				}
			}
		}
	}
	t.Logf("searched %d files and streams for %d values in %d forms: %d found", len(haystacks), len(values), len(canaryForms("x"))+4, found)
}
