package secret

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

type tokenValuer struct{}

func (tokenValuer) LogValue() slog.Value { return slog.StringValue("from valuer tok-SECRET-1") }

type config struct{ URL string }

func TestRedactingHandler(t *testing.T) {
	r := NewRedactor(map[string]string{"TOK": "tok-SECRET-1"})
	const s = "tok-SECRET-1"
	tests := []struct {
		name string
		log  func(l *slog.Logger)
		want []string // in the output
	}{
		{"message", func(l *slog.Logger) { l.Info("calling with " + s) }, []string{`"msg":"calling with [redacted:TOK]"`}},
		{"string attribute", func(l *slog.Logger) { l.Info("m", "header", "Bearer "+s) }, []string{`"header":"Bearer [redacted:TOK]"`}},
		{"group", func(l *slog.Logger) { l.Info("m", slog.Group("req", "url", "https://x/?k="+s, "n", 3)) }, []string{`"req":{"url":"https://x/?k=[redacted:TOK]","n":3}`}},
		{"nested group", func(l *slog.Logger) {
			l.Info("m", slog.Group("a", slog.Group("b", "v", s)))
		}, []string{`"a":{"b":{"v":"[redacted:TOK]"}}`}},
		{"WithAttrs", func(l *slog.Logger) { l.With("token", s).Info("m") }, []string{`"token":"[redacted:TOK]"`}},
		{"WithGroup", func(l *slog.Logger) { l.WithGroup("g").Info("m", "v", s) }, []string{`"g":{"v":"[redacted:TOK]"}`}},
		{"error", func(l *slog.Logger) { l.Error("failed", "err", fmt.Errorf("post: %w", errors.New("bad token "+s))) }, []string{`"err":"post: bad token [redacted:TOK]"`}},
		{"LogValuer", func(l *slog.Logger) { l.Info("m", "v", tokenValuer{}) }, []string{`"v":"from valuer [redacted:TOK]"`}},
		{"struct", func(l *slog.Logger) { l.Info("m", "cfg", config{URL: "https://h/" + s}) }, []string{`"cfg":"{https://h/[redacted:TOK]}"`}},
		{"bytes", func(l *slog.Logger) { l.Info("m", "body", []byte("k="+s)) }, []string{`"body":"k=[redacted:TOK]"`}},
		{"untouched values keep their type", func(l *slog.Logger) {
			l.Info("m", "n", 42, "ok", true, "err", errors.New("plain"), "cfg", config{URL: "u"})
		}, []string{`"n":42`, `"ok":true`, `"err":"plain"`, `"cfg":{"URL":"u"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := slog.New(RedactingHandler(slog.NewJSONHandler(&buf, nil), r.Redact))
			tt.log(l)
			out := buf.String()
			if strings.Contains(out, s) {
				t.Errorf("output %s contains the value", out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output %s does not contain %s", out, w)
				}
			}
		})
	}
	var buf bytes.Buffer
	l := slog.New(RedactingHandler(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}), r.Redact))
	l.Info("dropped " + s)
	if buf.Len() != 0 {
		t.Errorf("a record below the level was written: %s", buf.String())
	}
}
