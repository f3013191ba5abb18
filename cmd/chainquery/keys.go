package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/chainquery/chainquery"
)

const keysUsage = `Usage:
  chainquery keys create --name NAME --endpoints LIST [LIMITS] [--db DSN]
  chainquery keys update --name NAME [--endpoints LIST] [LIMITS] [--db DSN]
  chainquery keys list [--db DSN]
  chainquery keys revoke --name NAME [--db DSN]

LIMITS: [--rate N] [--burst N] [--cost-rate N] [--cost-burst N] [--concurrency N]

API keys go in the apikey header of every request. Only a SHA-256 hash of each
key is stored: a key is printed once, when it is created, and never again.
A key's limits override serve's defaults for that key alone; 0 (or a limit
not given to create) is serve's default. update changes only the flags given.
Keys live in the database, so every API server on it sees them; one that
reads from a PostgreSQL replica (serve --read-db) sees a change once the
replica has replayed it, usually within a second.
`

// parseKeys parses the keys subcommands.
func (m *Main) parseKeys(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(m.Stderr, keysUsage)
		return &usageError{msg: "keys needs a subcommand: create, update, list or revoke"}
	}
	var c command
	var err error
	switch name, rest := args[0], args[1:]; name {
	case "create":
		c, err = m.parseKeysCreate(rest)
	case "update":
		c, err = m.parseKeysUpdate(rest)
	case "list":
		c, err = m.parseKeysList(rest)
	case "revoke":
		c, err = m.parseKeysRevoke(rest)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(m.Stdout, keysUsage)
		return flag.ErrHelp
	default:
		return usagef("chainquery keys -h", "unknown keys subcommand %q: use create, update, list or revoke", name)
	}
	return m.use(c, err)
}

// keyName is what a key name may hold: it shows up in request logs and in
// the keys list table, where spaces or control characters would mislead.
var keyName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`)

// keysCreateCmd creates a key and prints it once.
type keysCreateCmd struct {
	db        dsn
	name      string
	endpoints []chainquery.Endpoint
	limits    chainquery.KeyLimits
}

// endpointsUsage is the help of --endpoints.
var endpointsUsage = "`LIST` of endpoints the key may call: all, or a comma-separated list of\n" + strings.Join(endpointNames(), ",")

func (m *Main) parseKeysCreate(args []string) (command, error) {
	fs := newFlagSet("chainquery keys create")
	db := dsnVar(fs, "db", m.dbDefault(), "database `DSN` (env CHAINQUERY_DB)")
	name := fs.String("name", "", "`NAME` of the key, unique; shown in request logs (letters, digits, . _ @ -)")
	endpoints := fs.String("endpoints", "", endpointsUsage)
	limits := limitFlags(fs)
	usage := "Usage: chainquery keys create --name NAME --endpoints LIST [--db DSN]\n" +
		"         [--rate N] [--burst N] [--cost-rate N] [--cost-burst N] [--concurrency N]\n\n" +
		"Creates an API key and prints it alone on the last line of standard output.\n" +
		"This is the only time the key is shown: only its hash is stored.\n" +
		"A limit left out or 0 is serve's default; keys update changes them later.\n"
	if err := m.parse(fs, args, usage); err != nil {
		return nil, err
	}
	if err := required(fs, "name", "endpoints"); err != nil {
		return nil, err
	}
	c := &keysCreateCmd{name: *name, limits: *limits}
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
	if err := checkLimitFlags(fs); err != nil {
		return nil, err
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
		Limits:    c.limits,
		CreatedAt: time.Now().UTC(),
	}
	if err := store.CreateAPIKey(ctx, k); chainquery.ErrorCode(err) == chainquery.ECONFLICT {
		return fmt.Errorf("an API key named %q already exists: choose another name, or revoke it first (chainquery keys revoke --name %s)", c.name, c.name)
	} else if err != nil {
		return fmt.Errorf("create API key: %w", err)
	}
	// The key goes alone on the last line so that scripts can take it with
	// tail -n 1; the line before is for people.
	limits := ""
	if c.limits != (chainquery.KeyLimits{}) {
		limits = "; " + describeLimits(c.limits)
	}
	_, err = fmt.Fprintf(m.Stdout, "Created API key %q (endpoints: %s%s). Keep it now: it is shown only this once.\n%s\n",
		c.name, describeEndpoints(c.endpoints, ", "), limits, key)
	return err
}

// limitFlags defines the flags of a key's limits on fs and returns where
// they are parsed to.
func limitFlags(fs *flag.FlagSet) *chainquery.KeyLimits {
	l := new(chainquery.KeyLimits)
	fs.Float64Var(&l.Rate, "rate", 0, "requests per second the key may make, `N`; 0: serve's default")
	fs.IntVar(&l.Burst, "burst", 0, "requests the key may make at once before --rate paces them, `N`; 0: serve's default")
	fs.Float64Var(&l.CostRate, "cost-rate", 0, "cost units (milliseconds of store time) per second the key's budget\nrefills, `N`; 0: serve's default")
	fs.Float64Var(&l.CostBurst, "cost-burst", 0, "cost units the key's budget holds when full, `N`; 0: serve's default")
	fs.IntVar(&l.Concurrency, "concurrency", 0, "requests of the key that may use the store at once, `N`; 0: serve's default")
	return l
}

// limitNames are the flags of limitFlags, in the order keys list shows them.
var limitNames = []string{"rate", "burst", "cost-rate", "cost-burst", "concurrency"}

// checkLimitFlags returns a usage error naming the first limit flag that is
// negative or not a finite number (chainquery.KeyLimits.Validate).
func checkLimitFlags(fs *flag.FlagSet) error {
	for _, name := range limitNames {
		v, err := strconv.ParseFloat(fs.Lookup(name).Value.String(), 64)
		if err != nil || !(v >= 0) || math.IsInf(v, 1) {
			return usagef(fs.Name()+" -h", "--%s must be a finite number of at least 0 (0: serve's default)", name)
		}
	}
	return nil
}

// keysUpdateCmd changes the endpoints or limits of a key: those given.
type keysUpdateCmd struct {
	db     dsn
	name   string
	update chainquery.APIKeyUpdate
}

func (m *Main) parseKeysUpdate(args []string) (command, error) {
	fs := newFlagSet("chainquery keys update")
	db := dsnVar(fs, "db", m.dbDefault(), "database `DSN` (env CHAINQUERY_DB)")
	name := fs.String("name", "", "`NAME` of the key to change")
	endpoints := fs.String("endpoints", "", endpointsUsage)
	limits := limitFlags(fs)
	usage := "Usage: chainquery keys update --name NAME [--endpoints LIST] [--db DSN]\n" +
		"         [--rate N] [--burst N] [--cost-rate N] [--cost-burst N] [--concurrency N]\n\n" +
		"Changes what the flags given say of an API key, and nothing else; the key\n" +
		"itself stays the same. A limit set to 0 goes back to serve's default.\n" +
		"Running servers see the change within a second.\n"
	if err := m.parse(fs, args, usage); err != nil {
		return nil, err
	}
	if err := required(fs, "name"); err != nil {
		return nil, err
	}
	c := &keysUpdateCmd{name: *name}
	var err error
	if c.db, err = parseDBFlag(fs.Name()+" -h", db.s); err != nil {
		return nil, err
	}
	set := flagsSet(fs)
	if !set["endpoints"] && !slices.ContainsFunc(limitNames, func(n string) bool { return set[n] }) {
		return nil, usagef(fs.Name()+" -h", "nothing to change: give --endpoints or a limit (--%s)", strings.Join(limitNames, ", --"))
	}
	if set["endpoints"] {
		e, err := chainquery.ParseEndpoints(*endpoints)
		if err != nil {
			return nil, usagef(fs.Name()+" -h", "--endpoints: %s", errorText(err))
		}
		c.update.Endpoints = &e
	}
	if err := checkLimitFlags(fs); err != nil {
		return nil, err
	}
	if set["rate"] {
		c.update.Rate = &limits.Rate
	}
	if set["burst"] {
		c.update.Burst = &limits.Burst
	}
	if set["cost-rate"] {
		c.update.CostRate = &limits.CostRate
	}
	if set["cost-burst"] {
		c.update.CostBurst = &limits.CostBurst
	}
	if set["concurrency"] {
		c.update.Concurrency = &limits.Concurrency
	}
	return c, nil
}

func (c *keysUpdateCmd) run(ctx context.Context, m *Main) error {
	store, err := m.openStore(ctx, c.db, storeOptions{mustExist: true})
	if err != nil {
		return err
	}
	k, err := store.UpdateAPIKey(ctx, c.name, c.update)
	if chainquery.ErrorCode(err) == chainquery.ENOTFOUND {
		return fmt.Errorf("no API key named %q (chainquery keys list shows the names)", c.name)
	} else if err != nil {
		return fmt.Errorf("update API key: %w", err)
	}
	_, err = fmt.Fprintf(m.Stdout, "Updated API key %q (endpoints: %s; %s).\n",
		k.Name, describeEndpoints(k.Endpoints, ", "), describeLimits(k.Limits))
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
		"Lists API keys: name, endpoints, creation time (RFC 3339, UTC) and limits\n" +
		"(default: serve's). The keys themselves are never shown.\n"
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
	// The limits come after the columns there were before them, so that
	// scripts that read those by position keep working.
	fmt.Fprintln(w, "NAME\tENDPOINTS\tCREATED\tRATE\tBURST\tCOST RATE\tCOST BURST\tCONCURRENCY")
	for _, k := range keys {
		l := k.Limits
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.Name, describeEndpoints(k.Endpoints, ","), k.CreatedAt.UTC().Format(time.RFC3339),
			limitText(l.Rate), limitText(float64(l.Burst)), limitText(l.CostRate), limitText(l.CostBurst), limitText(float64(l.Concurrency)))
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

// limitText returns a limit as keys list shows it: "default" for 0 (serve's
// default), else the number in full, never in exponent form.
func limitText(v float64) string {
	if v == 0 {
		return "default"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// describeLimits returns the limits for a sentence: "rate 10, burst default, ...".
func describeLimits(l chainquery.KeyLimits) string {
	return fmt.Sprintf("rate %s, burst %s, cost rate %s, cost burst %s, concurrency %s",
		limitText(l.Rate), limitText(float64(l.Burst)), limitText(l.CostRate), limitText(l.CostBurst), limitText(float64(l.Concurrency)))
}
