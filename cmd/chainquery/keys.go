package main

import (
	"context"
	"flag"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/chainquery/chainquery"
)

const keysUsage = `Usage:
  chainquery keys create --name NAME --endpoints LIST [--db DSN]
  chainquery keys list [--db DSN]
  chainquery keys revoke --name NAME [--db DSN]

API keys go in the apikey header of every request. Only a SHA-256 hash of each
key is stored: a key is printed once, when it is created, and never again.
Keys live in the database, so every API server on it sees them; one that
reads from a PostgreSQL replica (serve --read-db) sees a change once the
replica has replayed it, usually within a second.
`

// parseKeys parses the keys subcommands.
func (m *Main) parseKeys(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(m.Stderr, keysUsage)
		return &usageError{msg: "keys needs a subcommand: create, list or revoke"}
	}
	var c command
	var err error
	switch name, rest := args[0], args[1:]; name {
	case "create":
		c, err = m.parseKeysCreate(rest)
	case "list":
		c, err = m.parseKeysList(rest)
	case "revoke":
		c, err = m.parseKeysRevoke(rest)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(m.Stdout, keysUsage)
		return flag.ErrHelp
	default:
		return usagef("chainquery keys -h", "unknown keys subcommand %q: use create, list or revoke", name)
	}
	if err != nil {
		return err
	}
	m.cmd = c
	return nil
}

// keyName is what a key name may hold: it shows up in request logs and in
// the keys list table, where spaces or control characters would mislead.
var keyName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`)

// keysCreateCmd creates a key and prints it once.
type keysCreateCmd struct {
	db        dsn
	name      string
	endpoints []chainquery.Endpoint
}

func (m *Main) parseKeysCreate(args []string) (command, error) {
	fs := newFlagSet("chainquery keys create")
	db := dsnVar(fs, "db", m.dbDefault(), "database `DSN` (env CHAINQUERY_DB)")
	name := fs.String("name", "", "`NAME` of the key, unique; shown in request logs (letters, digits, . _ @ -)")
	endpoints := fs.String("endpoints", "", "`LIST` of endpoints the key may call: all, or a comma-separated list of\n"+strings.Join(endpointNames(), ","))
	usage := "Usage: chainquery keys create --name NAME --endpoints LIST [--db DSN]\n\n" +
		"Creates an API key and prints it alone on the last line of standard output.\n" +
		"This is the only time the key is shown: only its hash is stored.\n"
	if err := m.parse(fs, args, usage); err != nil {
		return nil, err
	}
	if err := required(fs, "name", "endpoints"); err != nil {
		return nil, err
	}
	c := &keysCreateCmd{name: *name}
	var err error
	if c.db, err = parseDBFlag(fs.Name()+" -h", db.s); err != nil {
		return nil, err
	}
	if !keyName.MatchString(c.name) {
		return nil, usagef(fs.Name()+" -h", "--name must be 1 to 64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit")
	}
	if c.endpoints, err = chainquery.ParseEndpoints(*endpoints); err != nil {
		return nil, usagef(fs.Name()+" -h", "--endpoints: %s", errorText(err))
	}
	return c, nil
}

func (c *keysCreateCmd) run(ctx context.Context, m *Main) error {
	store, err := m.openStore(ctx, c.db, storeOptions{})
	if err != nil {
		return err
	}
	key, hash := chainquery.NewAPIKey()
	k := &chainquery.APIKey{
		Name:      c.name,
		Hash:      hash,
		Endpoints: c.endpoints,
		CreatedAt: time.Now().UTC(),
	}
	if err := store.CreateAPIKey(ctx, k); chainquery.ErrorCode(err) == chainquery.ECONFLICT {
		return fmt.Errorf("an API key named %q already exists: choose another name, or revoke it first (chainquery keys revoke --name %s)", c.name, c.name)
	} else if err != nil {
		return fmt.Errorf("create API key: %w", err)
	}
	// The key goes alone on the last line so that scripts can take it with
	// tail -n 1; the line before is for people.
	_, err = fmt.Fprintf(m.Stdout, "Created API key %q (endpoints: %s). Keep it now: it is shown only this once.\n%s\n",
		c.name, describeEndpoints(c.endpoints, ", "), key)
	return err
}

// keysListCmd prints a table of the keys. The table has no key or hash
// column: neither is needed to manage keys, and a hash is still worth
// keeping out of terminals and logs.
type keysListCmd struct{ db dsn }

func (m *Main) parseKeysList(args []string) (command, error) {
	fs := newFlagSet("chainquery keys list")
	db := dsnVar(fs, "db", m.dbDefault(), "database `DSN` (env CHAINQUERY_DB)")
	usage := "Usage: chainquery keys list [--db DSN]\n\n" +
		"Lists API keys: name, endpoints, and creation time (RFC 3339, UTC).\n" +
		"The keys themselves are never shown.\n"
	if err := m.parse(fs, args, usage); err != nil {
		return nil, err
	}
	d, err := parseDBFlag(fs.Name()+" -h", db.s)
	return &keysListCmd{db: d}, err
}

func (c *keysListCmd) run(ctx context.Context, m *Main) error {
	store, err := m.openStore(ctx, c.db, storeOptions{mustExist: true})
	if err != nil {
		return err
	}
	keys, err := store.ListAPIKeys(ctx)
	if err != nil {
		return fmt.Errorf("list API keys: %w", err)
	}
	w := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tENDPOINTS\tCREATED")
	for _, k := range keys {
		fmt.Fprintf(w, "%s\t%s\t%s\n", k.Name, describeEndpoints(k.Endpoints, ","), k.CreatedAt.UTC().Format(time.RFC3339))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(keys) == 0 {
		fmt.Fprintln(m.Stderr, "No API keys yet: create one with chainquery keys create --name NAME --endpoints all")
	}
	return nil
}

// keysRevokeCmd deletes a key: requests that carry it get 401 from then on.
type keysRevokeCmd struct {
	db   dsn
	name string
}

func (m *Main) parseKeysRevoke(args []string) (command, error) {
	fs := newFlagSet("chainquery keys revoke")
	db := dsnVar(fs, "db", m.dbDefault(), "database `DSN` (env CHAINQUERY_DB)")
	name := fs.String("name", "", "`NAME` of the key to revoke")
	usage := "Usage: chainquery keys revoke --name NAME [--db DSN]\n\n" +
		"Revokes an API key: requests that carry it are refused with 401 from then on.\n"
	if err := m.parse(fs, args, usage); err != nil {
		return nil, err
	}
	if err := required(fs, "name"); err != nil {
		return nil, err
	}
	d, err := parseDBFlag(fs.Name()+" -h", db.s)
	return &keysRevokeCmd{db: d, name: *name}, err
}

func (c *keysRevokeCmd) run(ctx context.Context, m *Main) error {
	store, err := m.openStore(ctx, c.db, storeOptions{mustExist: true})
	if err != nil {
		return err
	}
	if err := store.RevokeAPIKey(ctx, c.name); chainquery.ErrorCode(err) == chainquery.ENOTFOUND {
		return fmt.Errorf("no API key named %q (chainquery keys list shows the names)", c.name)
	} else if err != nil {
		return fmt.Errorf("revoke API key: %w", err)
	}
	_, err = fmt.Fprintf(m.Stdout, "Revoked API key %q.\n", c.name)
	return err
}

func endpointStrings(es []chainquery.Endpoint) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = string(e)
	}
	return out
}

// describeEndpoints returns "all" for a key enabled for every endpoint, so
// that the common case reads at a glance, and the joined names otherwise.
func describeEndpoints(es []chainquery.Endpoint, sep string) string {
	if slices.Equal(es, chainquery.Endpoints) {
		return "all"
	}
	return strings.Join(endpointStrings(es), sep)
}

func endpointNames() []string { return endpointStrings(chainquery.Endpoints) }
