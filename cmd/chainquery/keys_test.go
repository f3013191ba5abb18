package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// limitColumns are the columns of keys list that show a key's limits.
var limitColumns = []string{"RATE", "BURST", "COST RATE", "COST BURST", "CONCURRENCY"}

// keysTable parses the table keys list prints: a row per key, by column
// name. Columns are apart by two spaces or more (headers hold one).
func keysTable(t *testing.T, out string) []map[string]string {
	t.Helper()
	gap := regexp.MustCompile(`\s{2,}`)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	header := gap.Split(strings.TrimSpace(lines[0]), -1)
	if want := append([]string{"NAME", "ENDPOINTS", "CREATED"}, limitColumns...); strings.Join(header, "|") != strings.Join(want, "|") {
		t.Fatalf("keys list header %q, want %q", header, want)
	}
	var rows []map[string]string
	for _, line := range lines[1:] {
		cells := gap.Split(strings.TrimSpace(line), -1)
		if len(cells) != len(header) {
			t.Fatalf("keys list line %q has %d columns, want %d", line, len(cells), len(header))
		}
		row := map[string]string{}
		for i, c := range cells {
			row[header[i]] = c
		}
		rows = append(rows, row)
	}
	return rows
}

// wantLimits fails unless the row of keys list shows limits (in the order
// of limitColumns) and the endpoints.
func wantLimits(t *testing.T, row map[string]string, endpoints string, limits ...string) {
	t.Helper()
	if row["ENDPOINTS"] != endpoints {
		t.Errorf("%s: endpoints %q, want %q", row["NAME"], row["ENDPOINTS"], endpoints)
	}
	for i, c := range limitColumns {
		if row[c] != limits[i] {
			t.Errorf("%s: %s %q, want %q", row["NAME"], c, row[c], limits[i])
		}
	}
}

// TestKeys_Limits: keys create stores the limits given and keys list shows
// them (default for those not given); keys update changes only the flags
// given, of that key only; an unknown name, a negative limit or an update
// of nothing is refused with a message saying so, and changes nothing.
func TestKeys_Limits(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "keys.db")
	out := mustExecute(t, nil, "keys", "create", "--db", db, "--name", "limited", "--endpoints", "get_block",
		"--rate", "2.5", "--burst", "5", "--cost-rate", "250", "--cost-burst", "1500.5", "--concurrency", "3")
	if !strings.Contains(out, "rate 2.5, burst 5, cost rate 250, cost burst 1500.5, concurrency 3") {
		t.Errorf("keys create does not tell the limits:\n%s", out)
	}
	mustExecute(t, nil, "keys", "create", "--db", db, "--name", "plain", "--endpoints", "all", "--rate", "0")

	list := func(t *testing.T) []map[string]string {
		t.Helper()
		rows := keysTable(t, mustExecute(t, nil, "keys", "list", "--db", db))
		if len(rows) != 2 || rows[0]["NAME"] != "limited" || rows[1]["NAME"] != "plain" {
			t.Fatalf("keys list: %v, want limited and plain", rows)
		}
		return rows
	}
	t.Run("Create", func(t *testing.T) {
		rows := list(t)
		wantLimits(t, rows[0], "get_block", "2.5", "5", "250", "1500.5", "3")
		wantLimits(t, rows[1], "all", "default", "default", "default", "default", "default")
	})

	t.Run("Update", func(t *testing.T) {
		out := mustExecute(t, nil, "keys", "update", "--db", db, "--name", "limited", "--rate", "10", "--concurrency", "0")
		if want := `Updated API key "limited" (endpoints: get_block; rate 10, burst 5, cost rate 250, cost burst 1500.5, concurrency default).`; strings.TrimSpace(out) != want {
			t.Errorf("keys update printed %q, want %q", out, want)
		}
		rows := list(t)
		wantLimits(t, rows[0], "get_block", "10", "5", "250", "1500.5", "default")
		wantLimits(t, rows[1], "all", "default", "default", "default", "default", "default")

		mustExecute(t, nil, "keys", "update", "--db", db, "--name", "plain", "--endpoints", "get_block,filter_traces", "--cost-burst", "1000000")
		rows = list(t)
		wantLimits(t, rows[0], "get_block", "10", "5", "250", "1500.5", "default")
		wantLimits(t, rows[1], "filter_traces,get_block", "default", "default", "default", "1000000", "default")
	})

	t.Run("ErrUpdateUnknown", func(t *testing.T) {
		r := execute(t, nil, "keys", "update", "--db", db, "--name", "nobody", "--rate", "1")
		r.wantFailure(t, 1, `chainquery: no API key named "nobody" (chainquery keys list shows the names)`)
		if r.stdout != "" {
			t.Errorf("stdout = %q, want nothing", r.stdout)
		}
	})

	t.Run("ErrInvalidLimit", func(t *testing.T) {
		for _, tt := range []struct {
			args []string
			want string
		}{
			{[]string{"create", "--name", "negative", "--endpoints", "all", "--burst", "-1"}, "--burst must be a finite number of at least 0 (0: serve's default)"},
			{[]string{"create", "--name", "negative", "--endpoints", "all", "--cost-rate", "NaN"}, "--cost-rate must be a finite number of at least 0"},
			{[]string{"update", "--name", "limited", "--rate", "1", "--concurrency", "-2"}, "--concurrency must be a finite number of at least 0"},
			{[]string{"update", "--name", "limited", "--cost-burst", "+Inf"}, "--cost-burst must be a finite number of at least 0"},
			{[]string{"update", "--name", "limited", "--rate", "fast"}, `invalid value "fast" for flag -rate`},
		} {
			execute(t, nil, append(append([]string{"keys"}, tt.args...), "--db", db)...).wantFailure(t, 2, tt.want)
		}
		// Nothing was made or changed.
		rows := list(t)
		wantLimits(t, rows[0], "get_block", "10", "5", "250", "1500.5", "default")
	})
}
