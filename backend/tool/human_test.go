package tool

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/secret"
)

// mapVars resolves from a fixed map, as the workspace's variables would.
type mapVars map[string]string

func (m mapVars) Resolve(text string) (string, error) {
	return secret.Resolve(text, func(n string) (string, bool) { v, ok := m[n]; return v, ok })
}

func TestVariablesInShell(t *testing.T) {
	env := testEnv(t)
	env.Vars = mapVars{"API_TOKEN": "tok-123456", "REGION": "eu"}
	tests := []struct {
		name  string
		input map[string]any
		want  string
	}{
		{"in the command", map[string]any{"command": `echo "${REGION}"`}, "eu\n"},
		{"in env values", map[string]any{"command": `echo "$T/$R"`, "env": map[string]any{"T": "${API_TOKEN}", "R": "x-${REGION}"}}, "tok-123456/x-eu\n"},
		{"escaped stays literal", map[string]any{"command": `echo '$${REGION}'`}, "${REGION}\n"},
		{"plain shell variables untouched", map[string]any{"command": `R=local; echo "$R"`}, "local\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runShell(t, env, tt.input).Output; got != tt.want {
				t.Errorf("output = %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("unknown name fails before running", func(t *testing.T) {
		marker := env.FilesDir + "/ran"
		_, err := call(t, env, "run_command", map[string]any{"command": "touch " + marker + "; echo ${NOPE}"})
		wantErr(t, err, fault.ErrInvalid, "NOPE")
		if _, statErr := os.Stat(marker); statErr == nil {
			t.Fatal("the command ran although a variable was unknown (partial substitution)")
		}
	})
	t.Run("bad env name", func(t *testing.T) {
		_, err := call(t, env, "run_command", map[string]any{"command": "true", "env": map[string]any{"A-B": "x"}})
		wantErr(t, err, fault.ErrInvalid, "A-B")
	})
}

func TestVariablesInFetch(t *testing.T) {
	var gotAuth, gotQuery string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotQuery = r.Header.Get("Authorization"), r.URL.Query().Get("k")
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	env := testEnv(t)
	env.Vars = mapVars{"API_TOKEN": "tok-123456"}
	mustCall(t, env, "fetch_url", map[string]any{"url": srv.URL + "/?k=${API_TOKEN}", "headers": map[string]any{"Authorization": "Bearer ${API_TOKEN}"}})
	if gotAuth != "Bearer tok-123456" || gotQuery != "tok-123456" {
		t.Fatalf("server saw Authorization %q and k=%q, want the resolved token in both", gotAuth, gotQuery)
	}
	_, err := call(t, env, "fetch_url", map[string]any{"url": srv.URL, "headers": map[string]any{"X-Key": "${MISSING}"}})
	wantErr(t, err, fault.ErrInvalid, "MISSING")
	env.Vars = nil
	_, err = call(t, env, "fetch_url", map[string]any{"url": srv.URL, "headers": map[string]any{"X-Key": "${API_TOKEN}"}})
	wantErr(t, err, fault.ErrInvalid, "API_TOKEN")
}

func TestPauseTools(t *testing.T) {
	tests := []struct {
		tool, input, kind, wantErr string
	}{
		{"ask_question", `{"questions":[{"question":"Which day?","options":["Mon","Tue"]},{"question":"Budget?"}]}`, "question", ""},
		{"ask_question", `{"questions":[]}`, "", "1 to 6"},
		{"ask_question", `{"questions":[{"question":"1"},{"question":"2"},{"question":"3"},{"question":"4"},{"question":"5"},{"question":"6"},{"question":"7"}]}`, "", "1 to 6"},
		{"request_approval", `{"title":"Clean up","items":[{"title":"Delete a.txt","kind":"command","detail":"rm a.txt","tool":"run_command","input":{"command":"rm a.txt"}},{"title":"Email Bob"}]}`, "approval", ""},
		{"request_approval", `{"items":[{"title":"x","kind":"video"}]}`, "", "kind"},
		{"request_approval", `{"policy":true,"items":[{"title":"x"}]}`, "", "policy"},
		{"request_connector", `{"connector":"GitHub","fields":[{"name":"token","type":"secret","required":true}]}`, "connector", ""},
		{"request_connector", `{"connector":"GitHub","fields":[{"name":"Token"}]}`, "", "lowercase"},
		{"request_credential", `{"variable":"STRIPE_KEY","label":"Stripe secret key"}`, "credential", ""},
		{"request_credential", `{"variable":"stripe key"}`, "", "uppercase"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.input[:min(40, len(tt.input))], func(t *testing.T) {
			tl, _ := Find(Catalog(), tt.tool)
			if !tl.IsPause() {
				t.Fatalf("%s is not a pause tool", tt.tool)
			}
			kind, req, err := tl.Pause(json.RawMessage(tt.input))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || kind != tt.kind || req == nil {
				t.Fatalf("got kind %q, request %v, err %v; want kind %q", kind, req, err, tt.kind)
			}
		})
	}
}

type recordingNotifier struct{ got []string }

func (r *recordingNotifier) Notify(_ context.Context, kind, title, body string) error {
	r.got = append(r.got, kind+"|"+title+"|"+body)
	return nil
}

func TestNotifyTool(t *testing.T) {
	env := testEnv(t)
	n := &recordingNotifier{}
	env.Notifier = n
	mustCall(t, env, "notify", map[string]any{"kind": "progress", "title": "Half done", "body": "50 of 100 rows"})
	if len(n.got) != 1 || n.got[0] != "progress|Half done|50 of 100 rows" {
		t.Fatalf("notifier got %v", n.got)
	}
	_, err := call(t, env, "notify", map[string]any{"kind": "question", "title": "x"})
	wantErr(t, err, fault.ErrInvalid, "kind")
	_, err = call(t, env, "notify", map[string]any{"kind": "info", "title": "  "})
	wantErr(t, err, fault.ErrInvalid, "title")
}

func TestActs(t *testing.T) {
	tests := []struct {
		name, input string
		want        bool
	}{
		{"run_command", `{"command":"ls"}`, true},
		{"db_execute", `{"sql":"DELETE FROM t"}`, true},
		{"db_query", `{"sql":"SELECT 1"}`, false},
		{"fetch_url", `{"url":"https://x"}`, false},
		{"fetch_url", `{"url":"https://x","method":"get"}`, false},
		{"fetch_url", `{"url":"https://x","method":"POST"}`, true},
		{"read_file", `{"path":"a"}`, false},
		{"write_file", `{"path":"a","content":"b"}`, true},
	}
	for _, tt := range tests {
		if got := Acts(tt.name, json.RawMessage(tt.input)); got != tt.want {
			t.Errorf("Acts(%s, %s) = %v, want %v", tt.name, tt.input, got, tt.want)
		}
	}
}

func TestPreviewWriteFileIsADiff(t *testing.T) {
	env := testEnv(t)
	mustCall(t, env, "write_file", map[string]any{"path": "notes.md", "content": "one\ntwo\nthree\n"})
	title, kind, detail := Preview(env, "write_file", json.RawMessage(`{"path":"notes.md","content":"one\n2\nthree\nfour\n"}`))
	want := "--- a/notes.md\n+++ b/notes.md\n@@ -1,3 +1,4 @@\n one\n-two\n+2\n three\n+four"
	if title != "Write notes.md" || kind != "diff" || detail != want {
		t.Fatalf("got %q %q\n%s\nwant diff\n%s", title, kind, detail, want)
	}
	_, kind, detail = Preview(env, "run_command", json.RawMessage(`{"command":"rm -rf build","env":{"A":"${X}"}}`))
	if kind != "command" || detail != "A=${X} rm -rf build" {
		t.Fatalf("run_command preview = %q %q", kind, detail)
	}
}
