// Package devchain runs a local EVM chain for development and tests: an anvil
// node (a real node binary, installed from the npm registry by scripts/setup)
// and a stream of varied transactions from the contracts in contracts/.
package devchain

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// AnvilPackage is the npm package that carries the anvil binary.
const AnvilPackage = "@foundry-rs/anvil-linux-amd64"

// AnvilPath finds the anvil binary: $CHAINQUERY_ANVIL, then
// node_modules/<AnvilPackage>/bin/anvil in this directory or one above it (the
// repository root, where scripts/setup installs it), then $PATH.
func AnvilPath() (string, error) {
	if p := os.Getenv("CHAINQUERY_ANVIL"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("CHAINQUERY_ANVIL: %w", err)
		}
		return p, nil
	}
	if dir, err := os.Getwd(); err == nil {
		for {
			p := filepath.Join(dir, "node_modules", AnvilPackage, "bin", "anvil")
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	if p, err := exec.LookPath("anvil"); err == nil {
		return p, nil
	}
	return "", errors.New("anvil not found: run scripts/setup (it installs " + AnvilPackage + " from npm) or set CHAINQUERY_ANVIL")
}

// Anvil is a running anvil node listening on 127.0.0.1.
type Anvil struct {
	URL     string
	ChainID uint64

	cmd   *exec.Cmd
	done  chan struct{}
	cache string // --cache-path, removed by Close
	mu    sync.Mutex
	tail  []string // last lines of output, for error messages
}

var listening = regexp.MustCompile(`Listening on (127\.0\.0\.1:\d+)`)

// StartAnvil starts anvil with the chain id on a free loopback port and waits
// until it listens. Extra arguments go to anvil as they are.
func StartAnvil(ctx context.Context, chainID uint64, args ...string) (*Anvil, error) {
	path, err := AnvilPath()
	if err != nil {
		return nil, err
	}
	// anvil keeps the states of older blocks on disk (about 0.7 GB for a few
	// thousand busy blocks) and, when killed, leaves them behind in
	// ~/.foundry/anvil/tmp: they filled this machine's disk once. Each node
	// gets its own cache directory, removed by Close.
	cache, err := os.MkdirTemp("", "chainquery-anvil-*")
	if err != nil {
		return nil, err
	}
	args = append([]string{"--host", "127.0.0.1", "--port", "0", "--chain-id", strconv.FormatUint(chainID, 10), "--cache-path", cache}, args...)
	cmd := exec.Command(path, args...)
	if cpus := os.Getenv("CHAINQUERY_ANVIL_CPUS"); cpus != "" {
		// Benchmarks pin the node to its own CPUs (taskset), as a node on
		// its own machine would be, so that the ingester's work does not
		// slow the node it is measured against.
		cmd = exec.Command("taskset", append([]string{"-c", cpus, path}, args...)...)
	}
	detach(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(cache)
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		os.RemoveAll(cache)
		return nil, fmt.Errorf("start anvil: %w", err)
	}
	a := &Anvil{ChainID: chainID, cmd: cmd, done: make(chan struct{}), cache: cache}
	addr := make(chan string, 1)
	go func() {
		defer close(a.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			a.mu.Lock()
			a.tail = append(a.tail, line)
			if len(a.tail) > 20 {
				a.tail = a.tail[1:]
			}
			a.mu.Unlock()
			if m := listening.FindStringSubmatch(line); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, out)
		cmd.Wait()
	}()
	select {
	case a.URL = <-addr:
		a.URL = "http://" + a.URL
		return a, nil
	case <-a.done:
		os.RemoveAll(cache)
		return nil, fmt.Errorf("anvil exited before listening: %s", a.output())
	case <-time.After(30 * time.Second):
		a.Close()
		return nil, fmt.Errorf("anvil did not listen within 30s: %s", a.output())
	case <-ctx.Done():
		a.Close()
		return nil, ctx.Err()
	}
}

func (a *Anvil) output() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return strings.Join(a.tail, "\n")
}

// Close stops the node: SIGTERM first, so that anvil writes its --state
// file if it was given one, then SIGKILL if it has not exited within 5 s.
func (a *Anvil) Close() error {
	if a.cmd.Process == nil {
		return nil
	}
	a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.done:
	case <-time.After(5 * time.Second):
		a.cmd.Process.Kill()
		<-a.done
	}
	return os.RemoveAll(a.cache)
}
