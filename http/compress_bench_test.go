package http_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/internal/polychain"
	"github.com/chainquery/chainquery/internal/polyrows"
	"github.com/chainquery/chainquery/sqlite"
)

// polygonAnswers serves two Polygon-shaped blocks (internal/polychain,
// decoded by the ingester's decoders) from a real SQLite store, with one
// confirmation so that the first is deep, and returns the handler, a key
// and the requests of the answers the benchmarks compress.
func polygonAnswers(b *testing.B) (http.Handler, string, []benchRequest) {
	b.Helper()
	c, err := polychain.New(polychain.Config{Seed: 1, Blocks: 2})
	if err != nil {
		b.Fatal(err)
	}
	db, err := sqlite.Open(filepath.Join(b.TempDir(), "db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	var data []*chainquery.BlockData
	for n := c.First(); n <= c.Last(); n++ {
		d, err := polyrows.Decode(c, n, polychain.KindParity)
		if err != nil {
			b.Fatal(err)
		}
		data = append(data, d)
	}
	if err := db.WriteBlocks(context.Background(), chainquery.Polygon, data); err != nil {
		b.Fatal(err)
	}
	key := MustCreateKey(b, db, "bench", chainquery.Endpoints...)
	srv := cqhttp.NewServer(cqhttp.Config{
		Store: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Confirmations: map[chainquery.Chain]uint64{chainquery.Polygon: 1},
	})
	n := c.First()
	// The transaction with the most logs.
	counts := map[chainquery.Hash]int{}
	var most chainquery.Hash
	for _, l := range data[0].Logs {
		if counts[l.TransactionHash]++; counts[l.TransactionHash] > counts[most] {
			most = l.TransactionHash
		}
	}
	return srv.Handler(), key, []benchRequest{
		{"GetBlockFull", "GET", fmt.Sprintf("/api/v1/customer/polygon/block?block_number=%d&full_transactions=true", n), ""},
		{"GetBlock", "GET", fmt.Sprintf("/api/v1/customer/polygon/block?block_number=%d", n), ""},
		{"FilterTraces50", "POST", "/api/v1/customer/polygon/traces/filter?limit=50", fmt.Sprintf(`{"from_block":%d,"to_block":%d}`, n, n)},
		{"BlockReceipts50", "GET", fmt.Sprintf("/api/v1/customer/polygon/blocks/receipts?block_number=%d&limit=50", n), ""},
		{"TransactionLogs", "GET", fmt.Sprintf("/api/v1/customer/polygon/transactions/%s/logs?limit=50", most.Hex()), ""},
	}
}

type benchRequest struct{ name, method, path, body string }

func (r benchRequest) serve(h http.Handler, key string, header ...string) *httptest.ResponseRecorder {
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req := httptest.NewRequest(r.method, r.path, body)
	req.Header.Set("apikey", key)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// BenchmarkGzip compresses Polygon-shaped answers at three levels and
// reports the compressed size as a share of the plain one; the ETag's two
// CRCs are measured on the same bytes. Run it alone: go test ./http -run
// '^$' -bench Gzip -benchtime 200x.
func BenchmarkGzip(b *testing.B) {
	h, key, reqs := polygonAnswers(b)
	for _, r := range reqs {
		rec := r.serve(h, key)
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", r.name, rec.Code, rec.Body)
		}
		plain := rec.Body.Bytes()
		for _, level := range []struct {
			name  string
			level int
		}{{"BestSpeed", gzip.BestSpeed}, {"Level3", 3}, {"Default", gzip.DefaultCompression}} {
			b.Run(fmt.Sprintf("%s_%dB/%s", r.name, len(plain), level.name), func(b *testing.B) {
				zw, _ := gzip.NewWriterLevel(io.Discard, level.level)
				var out bytes.Buffer
				b.SetBytes(int64(len(plain)))
				for b.Loop() {
					out.Reset()
					zw.Reset(&out)
					zw.Write(plain)
					zw.Close()
				}
				b.ReportMetric(100*float64(out.Len())/float64(len(plain)), "%size")
			})
		}
		b.Run(fmt.Sprintf("%s_%dB/ETagCRCs", r.name, len(plain)), func(b *testing.B) {
			castagnoli := crc32.MakeTable(crc32.Castagnoli)
			b.SetBytes(int64(len(plain)))
			for b.Loop() {
				crc32.ChecksumIEEE(plain)
				crc32.Checksum(plain, castagnoli)
			}
		})
	}
}

// BenchmarkServeEncoding serves the same deep answers through the whole
// handler as they are, gzip-compressed, and as 304s.
func BenchmarkServeEncoding(b *testing.B) {
	h, key, reqs := polygonAnswers(b)
	for _, r := range reqs {
		tag := r.serve(h, key).Header().Get("ETag")
		for _, c := range []struct {
			name   string
			header []string
		}{
			{"Identity", nil},
			{"Gzip", []string{"Accept-Encoding", "gzip"}},
			{"NotModified", []string{"If-None-Match", tag}},
		} {
			b.Run(r.name+"/"+c.name, func(b *testing.B) {
				for b.Loop() {
					if rec := r.serve(h, key, c.header...); rec.Code != http.StatusOK && rec.Code != http.StatusNotModified {
						b.Fatalf("%d %s", rec.Code, rec.Body)
					}
				}
			})
		}
	}
}
