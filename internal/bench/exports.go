package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/chainquery/chainquery"
	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/internal/polychain"
)

// ExportRow is one export measured twice in the same run: over HTTP from the
// real server, following its cursors to the end, and as the raw read of the
// same rows in-process, the same store's chunked Find calls
// (chainquery.Export) with no encoding and no HTTP.
type ExportRow struct {
	Name       string
	Rows       int
	Bytes      int64   // of the NDJSON answers
	Responses  int     // HTTP answers it took (the per-answer budget cuts long ones)
	Raw, HTTP  float64 // rows per second, the best of the rounds
	RawS, HTTS float64 // seconds of the best round
}

// Ratio is the export's rate over the raw read's.
func (r *ExportRow) Ratio() float64 { return r.HTTP / r.Raw }

// exportWorkload is one export: its path and body, and the same read
// in-process.
type exportWorkload struct {
	name, path, body string
	read             func(ctx context.Context, s chainquery.Store) (int, error)
}

// exportWorkloads are the exports of c's blocks: every log, every trace, and
// the traces to the hot callee (about a tenth of them).
func exportWorkloads(c *polychain.Chain) []exportWorkload {
	lo, hi := c.First(), c.Last()
	minTime := cqhttp.DefaultTraceStart()[chainquery.Polygon] // serve's, which the export applies
	blocks := fmt.Sprintf(`{"from_block": %d, "to_block": %d`, lo, hi)
	hot := FindAddresses(c).Hot
	hotAddr, _ := chainquery.ParseAddress("to_address", hot)
	traces := func(to []chainquery.Address) func(context.Context, chainquery.Store) (int, error) {
		return func(ctx context.Context, s chainquery.Store) (int, error) {
			e, err := chainquery.NewTraceExport(s, chainquery.TraceFilter{Chain: chainquery.Polygon, FromBlock: &lo, ToBlock: &hi, ToAddresses: to, MinTime: minTime}, "")
			if err != nil {
				return 0, err
			}
			return drain(ctx, e)
		}
	}
	return []exportWorkload{
		{"Export Logs, every log", "/api/v1/customer/polygon/logs/export", blocks + "}",
			func(ctx context.Context, s chainquery.Store) (int, error) {
				e, err := chainquery.NewLogExport(s, chainquery.LogRangeFilter{Chain: chainquery.Polygon, FromBlock: &lo, ToBlock: &hi}, "")
				if err != nil {
					return 0, err
				}
				return drain(ctx, e)
			}},
		{"Export Traces, every trace", "/api/v1/customer/polygon/traces/export", blocks + "}", traces(nil)},
		{"Export Traces, to the hot callee", "/api/v1/customer/polygon/traces/export", blocks + `, "to_address": "` + hot + `"}`,
			traces([]chainquery.Address{hotAddr})},
	}
}

// drain reads e to its end and returns its rows.
func drain[T any](ctx context.Context, e *chainquery.Export[T]) (int, error) {
	n := 0
	for !e.Done() {
		rows, err := e.Next(ctx)
		if err != nil {
			return n, err
		}
		n += len(rows)
	}
	return n, nil
}

// Exports measures each export of c's blocks, rounds times each way (the
// raw read first, which also warms the page cache for both), on the server
// s and on the store of dsn opened in this process, and keeps each way's
// best round. The two must read the same number of rows.
func Exports(ctx context.Context, s *Server, dsn string, c *polychain.Chain, rounds int, progress func(string)) ([]*ExportRow, error) {
	store, err := openStore(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	var out []*ExportRow
	for _, w := range exportWorkloads(c) {
		row := &ExportRow{Name: w.name}
		for i := 0; i < rounds; i++ {
			start := time.Now()
			n, err := w.read(ctx, store)
			if err != nil {
				return out, fmt.Errorf("%s, in-process: %w", w.name, err)
			}
			if d := time.Since(start).Seconds(); row.RawS == 0 || d < row.RawS {
				row.RawS, row.Rows = d, n
			}
		}
		for i := 0; i < rounds; i++ {
			start := time.Now()
			n, size, answers, err := s.export(ctx, w.path, w.body)
			if err != nil {
				return out, fmt.Errorf("%s, over HTTP: %w", w.name, err)
			}
			if n != row.Rows {
				return out, fmt.Errorf("%s: %d rows over HTTP, %d in-process", w.name, n, row.Rows)
			}
			if d := time.Since(start).Seconds(); row.HTTS == 0 || d < row.HTTS {
				row.HTTS, row.Bytes, row.Responses = d, size, answers
			}
		}
		row.Raw, row.HTTP = float64(row.Rows)/row.RawS, float64(row.Rows)/row.HTTS
		if progress != nil {
			progress(fmt.Sprintf("%s: %d rows, %.0f rows/s over HTTP, %.0f in-process (%.2f)", w.name, row.Rows, row.HTTP, row.Raw, row.Ratio()))
		}
		out = append(out, row)
	}
	return out, nil
}

// export reads the export of body at path to its end, resuming each cut
// answer from its last cursor as a client would, and returns its rows, the
// bytes of its answers and how many answers it took.
func (s *Server) export(ctx context.Context, path, body string) (rows int, size int64, answers int, err error) {
	cursor := ""
	for answers < 10_000 {
		b := body
		if cursor != "" {
			b = strings.TrimSuffix(body, "}") + fmt.Sprintf(`, "cursor": %q}`, cursor)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+path, strings.NewReader(b))
		if err != nil {
			return rows, size, answers, err
		}
		req.Header.Set("apikey", s.Key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := plainClient.Do(req)
		if err != nil {
			return rows, size, answers, err
		}
		answers++
		if resp.StatusCode != http.StatusOK {
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return rows, size, answers, fmt.Errorf("status %d: %s", resp.StatusCode, msg)
		}
		// Rows after the last checkpoint of a cut answer come again.
		pending, done := 0, false
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
		for sc.Scan() {
			line := sc.Bytes()
			size += int64(len(line)) + 1
			if !bytes.HasPrefix(line, []byte(`{"cursor":`)) {
				pending++
				continue
			}
			var cp struct{ Cursor *string }
			if err := json.Unmarshal(line, &cp); err != nil {
				resp.Body.Close()
				return rows, size, answers, err
			}
			rows += pending
			pending = 0
			if cp.Cursor == nil {
				done = true
				break
			}
			cursor = *cp.Cursor
		}
		err = sc.Err()
		resp.Body.Close()
		if err != nil || done {
			return rows, size, answers, err
		}
	}
	return rows, size, answers, fmt.Errorf("the export did not end after %d answers", answers)
}

// ExportTable is the markdown table of an export run.
func ExportTable(rows []*ExportRow) string {
	var b strings.Builder
	b.WriteString("| Export | Rows | NDJSON | Answers | Over HTTP | Raw read in-process | Ratio |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %.1f MB | %d | %.0f rows/s (%.2f s) | %.0f rows/s (%.2f s) | %.2f |\n",
			r.Name, r.Rows, float64(r.Bytes)/1e6, r.Responses, r.HTTP, r.HTTS, r.Raw, r.RawS, r.Ratio())
	}
	return b.String()
}
