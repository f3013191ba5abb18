package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/chainquery/chainquery/internal/devchain"
	"github.com/chainquery/chainquery/jsonrpc"
)

// ensureAnvil installs anvil with the project's own setup when it cannot be
// found, so that dev works on a fresh clone; outside a clone it says how to
// install it.
func ensureAnvil(ctx context.Context, m *Main, logger *slog.Logger) error {
	if _, err := devchain.AnvilPath(); err == nil {
		return nil
	}
	root, ok := repoRoot()
	if !ok {
		return fmt.Errorf("anvil not found, and this is not a chainquery checkout whose scripts/setup could install it: "+
			"run 'npm install %s' here, put anvil on $PATH, or set CHAINQUERY_ANVIL to the binary", devchain.AnvilPackage)
	}
	logger.Info("anvil not found: running scripts/setup to install it", "dir", root)
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "setup"))
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, m.Stderr, m.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("scripts/setup failed (%v): fix what it says and run chainquery dev again", err)
	}
	_, err := devchain.AnvilPath()
	return err
}

// repoRoot finds the chainquery checkout that holds the working directory:
// the first directory upwards whose go.mod is this module's and that has
// scripts/setup. The go.mod check keeps dev from running another project's
// setup script.
func repoRoot() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(mod), []byte("module github.com/chainquery/chainquery\n")) {
			if _, err := os.Stat(filepath.Join(dir, "scripts", "setup")); err == nil {
				return dir, true
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// saveAnvilState writes anvil's state to path in the form --state loads, so
// that dev --keep continues this chain. anvil_dumpState answers with the
// state JSON gzipped and hex-encoded. When anvil is already gone (Ctrl-C
// reached it and it saved the state itself) there is nothing to do.
func saveAnvilState(ctx context.Context, url, path string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c := jsonrpc.NewClient(url)
	c.Attempts = 1
	var state string
	if err := c.Call(ctx, &state, "anvil_dumpState"); err != nil {
		if _, serr := os.Stat(path); serr == nil {
			return nil // anvil exited first and wrote the file on its way out
		}
		return fmt.Errorf("anvil_dumpState: %w", err)
	}
	data, err := hex.DecodeString(strings.TrimPrefix(state, "0x"))
	if err != nil {
		return fmt.Errorf("anvil_dumpState: %w", err)
	}
	if zr, err := gzip.NewReader(bytes.NewReader(data)); err == nil {
		if data, err = io.ReadAll(zr); err != nil {
			return fmt.Errorf("anvil_dumpState: %w", err)
		}
	}
	// Written aside and renamed, so that a kill midway leaves the last good
	// state rather than half of this one.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
