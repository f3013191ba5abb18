package main

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// TestRedactLogger checks that a node URL with a key in it never reaches the
// logs whole: not in the message, a string, an error, a group, or
// attributes added with With.
func TestRedactLogger(t *testing.T) {
	const rpc = "https://polygon.example/v2/secretkey"
	var out strings.Builder
	logger := redactLogger(slog.New(slog.NewTextHandler(&out, nil)), rpc, redactURL(rpc))
	err := fmt.Errorf("eth_call: %w", errors.New(`Post "`+rpc+`": dial tcp: connection refused`))
	logger.With("node", rpc).WithGroup("g").Warn("retrying "+rpc, "error", err, "url", rpc, slog.Group("inner", "u", rpc), "n", 3)
	got := out.String()
	if strings.Contains(got, "secretkey") {
		t.Errorf("the key reached the log:\n%s", got)
	}
	contains(t, "the log", got, "https://polygon.example/...", "dial tcp: connection refused", "g.n=3")
	if redactLogger(slog.Default(), "http://127.0.0.1:8545", redactURL("http://127.0.0.1:8545")) != slog.Default() {
		t.Error("a URL without a path is wrapped for nothing")
	}
}
