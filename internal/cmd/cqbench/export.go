package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/chainquery/chainquery/internal/bench"
)

// runExport measures the exports against the raw read of the same rows, on
// a dataset cqbench ingest built.
func runExport(ctx context.Context, args []string) error {
	var w workFlags
	fs := flag.NewFlagSet("cqbench export", flag.ContinueOnError)
	w.register(fs)
	rounds := fs.Int("rounds", 3, "measurements of each export each way; the best counts")
	serverCPUs := fs.String("server-cpus", "", "taskset CPU `LIST` for the server")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := w.check(); err != nil {
		return err
	}
	c, err := w.chain()
	if err != nil {
		return err
	}
	say("starting chainquery serve on " + bench.RedactDSN(w.db))
	s, err := bench.StartServer(ctx, w.chainquery, w.db, *serverCPUs)
	if err != nil {
		return err
	}
	defer s.Stop()
	rows, err := bench.Exports(ctx, s, w.db, c, *rounds, say)
	fmt.Printf("%d blocks (%d-%d); each export read to its end %d times each way, the best kept; the raw read is the same store's chunked Find calls in-process, no encoding, no HTTP\n\n",
		c.Config().Blocks, c.First(), c.Last(), *rounds)
	fmt.Print(bench.ExportTable(rows))
	return err
}
