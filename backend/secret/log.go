package secret

import (
	"context"
	"fmt"
	"log/slog"
)

// RedactingHandler wraps h so that redact masks every record's message and
// every string it carries: string attributes (also inside groups and those
// added with WithAttrs), errors (their Error text) and other values as
// fmt prints them. A value redact leaves alone is passed on unchanged.
func RedactingHandler(h slog.Handler, redact func(string) string) slog.Handler {
	return &redactingHandler{h: h, redact: redact}
}

type redactingHandler struct {
	h      slog.Handler
	redact func(string) string
}

func (r *redactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return r.h.Enabled(ctx, l)
}

func (r *redactingHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, r.redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(r.attr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r *redactingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	masked := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		masked[i] = r.attr(a)
	}
	return &redactingHandler{h: r.h.WithAttrs(masked), redact: r.redact}
}

func (r *redactingHandler) WithGroup(name string) slog.Handler {
	return &redactingHandler{h: r.h.WithGroup(name), redact: r.redact}
}

func (r *redactingHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve() // a LogValuer may produce a secret too
	switch v.Kind() {
	case slog.KindString:
		if s, m := v.String(), r.redact(v.String()); m != s {
			return slog.String(a.Key, m)
		}
	case slog.KindGroup:
		group := v.Group()
		masked := make([]slog.Attr, len(group))
		for i, g := range group {
			masked[i] = r.attr(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(masked...)}
	case slog.KindAny:
		var s string
		switch x := v.Any().(type) {
		case error:
			s = x.Error()
		case []byte:
			s = string(x)
		default:
			s = fmt.Sprint(x)
		}
		if m := r.redact(s); m != s {
			return slog.String(a.Key, m)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
