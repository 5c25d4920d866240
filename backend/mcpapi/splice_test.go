package mcpapi

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
)

// The response writer puts each held answer in its placeholder's place,
// wherever the envelope has it (a JSON body, an event stream's message),
// and leaves everything else, a look-alike of another nonce included.
func TestSplicerReplacesHeldAnswers(t *testing.T) {
	rec := httptest.NewRecorder()
	ctx, rw := withSplicer(context.Background(), rec)
	if _, ok := rw.(interface{ Flush() }); !ok {
		t.Fatal("the splicer of a flushing writer does not flush")
	}
	a := hold(ctx, []byte(`{"type":"text","text":"{\"agents\":[]}"}`))
	b := hold(ctx, []byte(`{"type":"text","text":"second"}`))
	if string(a) == string(b) || !strings.HasPrefix(string(a), `"rerun-answer-`+spliceNonce) {
		t.Fatalf("placeholders %s and %s", a, b)
	}
	other := `"rerun-answer-00000000000000000000000000000000-0"`
	msg := "event: message\ndata: {\"result\":{\"content\":[" + string(a) + "," + string(b) + "],\"x\":" + other + "}}\n\n"
	n, err := rw.Write([]byte(msg))
	if err != nil || n != len(msg) {
		t.Fatalf("Write = %d, %v; want %d", n, err, len(msg))
	}
	want := "event: message\ndata: {\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"{\\\"agents\\\":[]}\"},{\"type\":\"text\",\"text\":\"second\"}],\"x\":" + other + "}}\n\n"
	if got := rec.Body.String(); got != want {
		t.Errorf("wrote\n%s\nwant\n%s", got, want)
	}

	// In process there is no splicer: the wire form itself is encoded.
	if w := hold(context.Background(), []byte(`{"a":1}`)); string(w) != `{"a":1}` {
		t.Errorf("hold without a splicer = %s", w)
	}
}
