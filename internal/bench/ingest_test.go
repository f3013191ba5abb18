package bench_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chainquery/chainquery/internal/bench"
	"github.com/chainquery/chainquery/internal/polychain"
)

// TestIngestChecksStored runs Ingest with a stand-in for chainquery that
// only logs a done line: a rate is reported only when the ingester stored
// the whole range in this run (the growth run resumes on one database, and
// a database that held some of the range would give a rate over fewer
// blocks).
func TestIngestChecksStored(t *testing.T) {
	c, err := polychain.New(polychain.Config{Seed: 3, Blocks: 10, TxPerBlock: 10, Accounts: 500})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(&polychain.Node{Chain: c})
	defer srv.Close()
	from, to := c.First()+5, c.Last()
	for _, tc := range []struct {
		blocks, head uint64
		out          string
		want         string
	}{
		{5, to, "", ""},
		{3, to, "", "stored 3 blocks up to"},
		{5, to - 1, "", "stored 5 blocks up to"},
		{0, 0, "no done line", "did not log its done line"},
	} {
		out := tc.out
		if out == "" {
			out = fmt.Sprintf(`{"level":"INFO","msg":"done","chain":"polygon","blocks":%d,"rows":1,"reorgs":0,"stored_head":%d}`, tc.blocks, tc.head)
		}
		fake := filepath.Join(t.TempDir(), "chainquery")
		if err := os.WriteFile(fake, []byte("#!/bin/sh\necho '"+out+"'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		res, err := bench.Ingest(context.Background(), bench.IngestOptions{Chainquery: fake, DSN: "sqlite:x.db", RPC: srv.URL,
			From: from, To: to, Traces: "trace_block", Batch: 2, Concurrency: 2})
		switch {
		case tc.want == "" && (err != nil || res.Blocks != 5):
			t.Errorf("%s: %+v, %v", out, res, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want %q", out, err, tc.want)
		}
	}
}
