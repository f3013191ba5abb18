// Command chainquery indexes blockchain data, serves it through a read-only
// HTTP API, and manages the API keys that guard it.
//
// This is the only package that imports the store, node, ingester and HTTP
// packages together: it parses flags, the environment and the config file,
// opens the database named by --db, and wires the store into the server and
// the ingesters. Everything it does goes through Main, so
// that the end-to-end test drives exactly what the binary runs.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"

	"github.com/chainquery/chainquery"
)

func main() {
	// The first SIGINT or SIGTERM cancels ctx, which starts a graceful
	// shutdown; stop() then restores the default handlers so that a second
	// signal ends the process at once instead of waiting for slow requests.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() { <-ctx.Done(); stop() }()
	os.Exit(NewMain().Execute(ctx, os.Args[1:]))
}

// Main is the program: ParseFlags chooses and configures a command, Run runs
// it, Close releases what Run opened. Create one with NewMain; tests then
// replace the writers and Getenv.
type Main struct {
	Stdout io.Writer               // command output: tables, the new key
	Stderr io.Writer               // logs and error messages
	Getenv func(key string) string // the environment, for CHAINQUERY_* defaults

	cmd     command
	closers []func() error // of the stores Run opened, closed by Close

	listenOnce sync.Once
	listening  chan struct{}
	addr       net.Addr
}

// NewMain returns a Main bound to the process's standard streams and
// environment.
func NewMain() *Main {
	return &Main{
		Stdout:    os.Stdout,
		Stderr:    os.Stderr,
		Getenv:    os.Getenv,
		listening: make(chan struct{}),
	}
}

// command is one subcommand, configured by its flags.
type command interface {
	run(ctx context.Context, m *Main) error
}

// usageError is a mistake in the command line (exit code 2): the command
// never started, so the message ends with where to find help.
type usageError struct {
	msg  string
	help string // e.g. "chainquery keys create -h"
}

func (e *usageError) Error() string { return e.msg }

func usagef(help, format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), help: help}
}

// Execute parses args, runs the command and closes it, and returns the exit
// code: 0 on success or when help was asked for, 2 for a usage error, 1 for
// any other error. Errors are printed to Stderr as "chainquery: <message>".
func (m *Main) Execute(ctx context.Context, args []string) int {
	err := m.ParseFlags(ctx, args)
	if err == nil {
		err = m.Run(ctx)
		err = errors.Join(err, m.Close())
	}
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(m.Stderr, "chainquery: %s\n", errorText(err))
	var u *usageError
	if errors.As(err, &u) {
		if u.help != "" {
			fmt.Fprintf(m.Stderr, "Run '%s' for usage.\n", u.help)
		}
		return 2
	}
	return 1
}

// errorText is the message an operator sees. A chainquery error carries a
// message written for people; its Error method adds codes meant for logs.
func errorText(err error) string {
	if e, ok := err.(*chainquery.Error); ok {
		return e.Message
	}
	return err.Error()
}

const mainUsage = `chainquery serves indexed blockchain data through a read-only HTTP API.

Usage:
  chainquery <command> [flags]

Commands:
  serve         serve the HTTP API (with --config, also follow chains)
  ingest evm    ingest an EVM chain from a JSON-RPC node
  ingest solana ingest Solana token balances from a Solana RPC node
  registry import  load a Solana token list into the token registry
  dev           run a local chain, index it and serve it: a demo in one command
  keys create   create an API key and print it (the only time it is shown)
  keys update   change the endpoints or limits of an API key
  keys list     list API keys: name, endpoints, creation time, limits
  keys revoke   revoke an API key
  migrate       bring a database up to this release: schema, and history's layout
  version       print the version and commit (also --version)

Run 'chainquery <command> -h' for the flags of a command.
` + dsnUsage

// use makes c the command to run, unless parsing it failed with err.
func (m *Main) use(c command, err error) error {
	if err != nil {
		return err
	}
	m.cmd = c
	return nil
}

// ParseFlags chooses the command named by args and parses its flags. It
// returns flag.ErrHelp after printing help to Stdout when help was asked for,
// and a usage error for anything it cannot make sense of.
func (m *Main) ParseFlags(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(m.Stderr, mainUsage)
		return &usageError{msg: "no command given"}
	}
	switch name, rest := args[0], args[1:]; name {
	case "serve":
		return m.use(m.parseServe(rest))
	case "keys":
		return m.parseKeys(rest)
	case "ingest":
		if len(rest) > 0 && rest[0] == "solana" {
			return m.use(m.parseIngestSolana(rest[1:]))
		}
		return m.parseIngest(rest)
	case "registry":
		return m.parseRegistry(rest)
	case "migrate":
		return m.use(m.parseMigrate(rest))
	case "dev":
		return m.use(m.parseDev(rest))
	case "version", "--version", "-version":
		if len(rest) > 0 {
			return usagef("chainquery -h", "version takes no arguments")
		}
		m.cmd = versionCmd{}
		return nil
	case "help", "-h", "-help", "--help":
		fmt.Fprint(m.Stdout, mainUsage)
		return flag.ErrHelp
	default:
		return usagef("chainquery -h", "unknown command %q", name)
	}
}

// Run runs the parsed command. For serve, dev and ingest --follow it returns
// once ctx is cancelled, in-flight requests have finished and the ingesters
// have stopped.
func (m *Main) Run(ctx context.Context) error {
	if m.cmd == nil {
		return errors.New("Run called before ParseFlags")
	}
	return m.cmd.run(ctx, m)
}

// Close releases what Run opened: the databases, last opened first. It is
// safe to call more than once.
func (m *Main) Close() error {
	m.markListening(nil) // wake anyone still waiting in Listening
	var errs []error
	for i := len(m.closers) - 1; i >= 0; i-- {
		if err := m.closers[i](); err != nil {
			errs = append(errs, fmt.Errorf("close database: %w", err))
		}
	}
	m.closers = nil
	return errors.Join(errs...)
}

// Listening is closed once serve accepts connections, or once it has failed
// to; Addr then tells which.
func (m *Main) Listening() <-chan struct{} { return m.listening }

// Addr returns the address serve listens on (useful with --listen
// 127.0.0.1:0), or nil if it is not listening.
func (m *Main) Addr() net.Addr {
	select {
	case <-m.listening:
		return m.addr
	default:
		return nil
	}
}

func (m *Main) markListening(addr net.Addr) {
	m.listenOnce.Do(func() {
		m.addr = addr
		close(m.listening)
	})
}

// env returns the environment variable key, or def when it is unset or empty.
func (m *Main) env(key, def string) string {
	if m.Getenv != nil {
		if v := strings.TrimSpace(m.Getenv(key)); v != "" {
			return v
		}
	}
	return def
}

// version and commit name the release and the commit it was built from.
// scripts/build sets them (from git describe and git rev-parse) with
//
//	go build -ldflags "-X main.version=v1.2.0 -X main.commit=SHA" ./cmd/chainquery
//
// A plain go build leaves them empty: the version command then says what the
// Go toolchain recorded instead (see versionLine).
var version, commit string

// versionCmd prints the version, the commit and the Go version of the build.
type versionCmd struct{}

func (versionCmd) run(ctx context.Context, m *Main) error {
	bi, _ := debug.ReadBuildInfo()
	_, err := fmt.Fprintln(m.Stdout, versionLine(version, commit, bi))
	return err
}

// versionLine is the version command's line, "chainquery VERSION (commit
// COMMIT, GOVERSION)". Whatever of version and commit is empty comes from bi,
// when there is one: the module version (a go install of a tagged module) and
// the VCS revision with "-dirty" when the tree had changes (what go build
// stamps in a checkout); else the version is "(devel)", as Go says.
func versionLine(version, commit string, bi *debug.BuildInfo) string {
	goVersion := ""
	if bi != nil {
		goVersion = bi.GoVersion
		if version == "" && bi.Main.Version != "" {
			version = bi.Main.Version
		}
		if commit == "" {
			var revision, modified string
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					revision = s.Value
				case "vcs.modified":
					modified = s.Value
				}
			}
			if revision != "" && modified == "true" {
				revision += "-dirty"
			}
			commit = revision
		}
	}
	if version == "" {
		version = "(devel)"
	}
	var about []string
	if commit != "" {
		about = append(about, "commit "+commit)
	}
	if goVersion != "" {
		about = append(about, goVersion)
	}
	line := "chainquery " + version
	if len(about) > 0 {
		line += " (" + strings.Join(about, ", ") + ")"
	}
	return line
}
