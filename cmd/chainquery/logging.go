package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"strings"
)

// logOptions are the --log-format and --log-level flags that every
// long-running command takes, so that serve, ingest and dev log alike.
type logOptions struct {
	format string
	level  slog.Level
}

// register adds the flags to fs with level as the default.
func (o *logOptions) register(fs *flag.FlagSet, level slog.Level) {
	fs.StringVar(&o.format, "log-format", "text", "log `FORMAT`: text or json")
	fs.TextVar(&o.level, "log-level", level, "log `LEVEL`: debug, info, warn or error")
}

// check returns a usage error for a format other than text or json; the
// level was already checked by the flag package.
func (o *logOptions) check(help string) error {
	if o.format != "text" && o.format != "json" {
		return usagef(help, "--log-format must be text or json")
	}
	return nil
}

// logger returns a logger writing to w in the chosen format.
func (o *logOptions) logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: o.level}
	if o.format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// isTerminal reports whether w is a terminal: only then is a progress line
// redrawn in place worth showing, since in a file or a pipe every redraw
// would pile up as a line of its own.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// lineClearer writes each log record over the progress line that shares the
// terminal with it: "\r\033[K" returns to the start of the line and clears
// it, so that a record never ends up glued to the end of a half-drawn
// progress line. The progress line is drawn again at its next tick.
type lineClearer struct{ w io.Writer }

func (c lineClearer) Write(p []byte) (int, error) {
	buf := make([]byte, 0, len(p)+4)
	buf = append(buf, "\r\033[K"...)
	buf = append(buf, p...)
	if _, err := c.w.Write(buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// redactLogger returns a logger that writes secret as shown wherever it
// appears in a message or in a string or error attribute. The node client
// logs its retries with the errors of net/http, which quote the node URL
// whole, key and all; this keeps the key out of the logs.
func redactLogger(logger *slog.Logger, secret, shown string) *slog.Logger {
	if secret == "" || secret == shown {
		return logger
	}
	return slog.New(redactingHandler{logger.Handler(), secret, shown})
}

type redactingHandler struct {
	slog.Handler
	secret, shown string
}

func (h redactingHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, strings.ReplaceAll(r.Message, h.secret, h.shown), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.redact(a))
		return true
	})
	return h.Handler.Handle(ctx, out)
}

func (h redactingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	for i, a := range attrs {
		attrs[i] = h.redact(a)
	}
	return redactingHandler{h.Handler.WithAttrs(attrs), h.secret, h.shown}
}

func (h redactingHandler) WithGroup(name string) slog.Handler {
	return redactingHandler{h.Handler.WithGroup(name), h.secret, h.shown}
}

func (h redactingHandler) redact(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	var s string
	switch v.Kind() {
	case slog.KindString:
		s = v.String()
	case slog.KindAny:
		err, ok := v.Any().(error)
		if !ok {
			return a
		}
		s = err.Error()
	case slog.KindGroup:
		group := v.Group()
		out := make([]slog.Attr, len(group))
		for i, g := range group {
			out[i] = h.redact(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	default:
		return a
	}
	if !strings.Contains(s, h.secret) {
		return a
	}
	return slog.String(a.Key, strings.ReplaceAll(s, h.secret, h.shown))
}
