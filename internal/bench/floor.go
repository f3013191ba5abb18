package bench

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/postgres"
	"github.com/chainquery/chainquery/sqlite"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Floor measures what one statement a request costs each store, with
// nothing of chainquery's server around it: bare net/http servers on
// 127.0.0.1 that answer the same small body after one store call (SELECT
// 1 on the read pool, the latest block, a block's header at number), in
// this process, against a server that answers it with no call (the
// ceiling), in alternated rounds. PostgreSQL's pool is serve's (16
// connections). It returns the markdown table of the rates and their
// share of the same round's ceiling.
func Floor(ctx context.Context, pgDSN, sqlitePath string, number uint64, rounds int, o LoadOptions) (string, error) {
	pg, err := postgres.Open(ctx, pgDSN, postgres.Options{MaxConns: 16})
	if err != nil {
		return "", err
	}
	defer pg.Close()
	lite, err := sqlite.Open(sqlitePath)
	if err != nil {
		return "", err
	}
	defer lite.Close()
	var x int64
	one := func(c interface {
		Query(ctx context.Context, q string, args, dest []any, row func() error) error
	}) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			return c.Query(ctx, "SELECT 1", nil, []any{&x}, func() error { return nil })
		}
	}
	stores := []struct {
		name  string
		store chainquery.Store
	}{{"PostgreSQL", pg}, {"SQLite", lite}}
	servers := []struct {
		name string
		f    func(ctx context.Context) error
	}{{"ceiling (no call)", nil}, {"PostgreSQL: SELECT 1", one(pg.Read)}, {"SQLite: SELECT 1", one(lite.Read)}}
	for _, s := range stores {
		st := s.store
		servers = append(servers,
			struct {
				name string
				f    func(ctx context.Context) error
			}{s.name + ": LatestBlock", func(ctx context.Context) error { _, err := st.LatestBlock(ctx, chainquery.Polygon); return err }},
			struct {
				name string
				f    func(ctx context.Context) error
			}{s.name + ": FindBlock, header", func(ctx context.Context) error {
				_, err := st.FindBlock(ctx, chainquery.Polygon, number, false)
				return err
			}})
	}
	const key = "floor"
	body := []byte(`{"chain":"polygon","block_number":1}`)
	urls := make([]string, len(servers))
	for i, s := range servers {
		url, stop, err := serveCall(key, s.f, body)
		if err != nil {
			return "", err
		}
		defer stop()
		urls[i] = url
	}
	w := Workload{Name: "floor", Targets: []vegeta.Target{{Method: http.MethodGet, URL: "/"}}}
	o = o.withDefaults()
	rates := make([][]float64, len(servers))
	for range rounds {
		for i, s := range servers {
			st := attack(ctx, urls[i], key, w, o)
			if st.Errors > 0 {
				return "", fmt.Errorf("%s: %d errors (%s)", s.name, st.Errors, st.Err)
			}
			rates[i] = append(rates[i], st.Rate)
		}
	}
	var b strings.Builder
	b.WriteString("| server | req/s each round (share of the round's ceiling) |\n|---|---|\n")
	for i, s := range servers {
		var each []string
		for r, rate := range rates[i] {
			each = append(each, fmt.Sprintf("%.0f (%.1f%%)", rate, 100*rate/rates[0][r]))
		}
		fmt.Fprintf(&b, "| %s | %s |\n", s.name, strings.Join(each, " / "))
	}
	return b.String(), nil
}

// serveCall serves body after a call of f (none when nil; a failed call
// is a 500), as serveKeyed.
func serveCall(key string, f func(ctx context.Context) error, body []byte) (string, func(), error) {
	return serveKeyed(key, func(w http.ResponseWriter, r *http.Request) {
		if f != nil {
			if err := f(r.Context()); err != nil {
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}
