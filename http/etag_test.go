package http_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/internal/storetest"
)

// openCachingServer serves the fixture with one confirmation on polygon:
// of its blocks 68000000..68000002, the first two are deep and the last is
// not. Ethereum has no confirmations, so nothing of it is cached.
func openCachingServer(tb testing.TB) *Server {
	return MustOpenServer(tb, func(c *cqhttp.Config) {
		c.Confirmations = map[chainquery.Chain]uint64{chainquery.Polygon: 1}
	})
}

// cacheCase is one request whose answer is cached (deep) or not.
type cacheCase struct {
	name, method, path, body string
	deep                     bool
}

func cacheCases() []cacheCase {
	block := func(n uint64) string { return fmt.Sprintf("?block_number=%d", n) }
	traces := func(from, to uint64) string { return fmt.Sprintf(`{"from_block": %d, "to_block": %d}`, from, to) }
	times := func(from, to int64) string {
		f := func(ts int64) string { return time.Unix(ts, 0).UTC().Format(time.RFC3339) }
		return fmt.Sprintf(`{"from_datetime": %q, "to_datetime": %q}`, f(from), f(to))
	}
	return []cacheCase{
		{"BlockDeep", "GET", blockPath("polygon", block(storetest.PolygonBlock)), "", true},
		{"BlockFullDeep", "GET", blockPath("polygon", block(storetest.PolygonBlock)+"&full_transactions=true"), "", true},
		{"BlockShallow", "GET", blockPath("polygon", block(storetest.PolygonLaterBlock)), "", false},
		{"ReceiptsDeep", "GET", receiptsPath("polygon", block(storetest.PolygonBlock)), "", true},
		{"ReceiptsShallow", "GET", receiptsPath("polygon", block(storetest.PolygonLaterBlock)), "", false},
		{"LogsDeep", "GET", logsPath("polygon", storetest.TxNested.Hex()), "", true},
		{"LogsShallow", "GET", logsPath("polygon", storetest.TxLater.Hex()), "", false}, // no logs: an empty page
		{"LogsNoConfirmations", "GET", logsPath("ethereum", storetest.TxEthereum.Hex()), "", false},
		{"LogsEmptyPage", "GET", logsPath("polygon", storetest.TxNested.Hex()) + "?offset=50", "", false},
		{"TracesDeep", "POST", tracesPath, traces(storetest.PolygonBlock, storetest.PolygonEmptyBlock), true},
		{"TracesShallow", "POST", tracesPath, traces(storetest.PolygonBlock, storetest.PolygonLaterBlock), false},
		{"TracesDatetimeDeep", "POST", tracesPath, times(storetest.PolygonTime, storetest.PolygonEmptyTime-1), true},
		// The bound block (68000001) itself is deep, but a later block
		// could share its second; the check stays on the safe side.
		{"TracesDatetimeAtBound", "POST", tracesPath, times(storetest.PolygonTime, storetest.PolygonEmptyTime), false},
		{"TracesDatetimeShallow", "POST", tracesPath, times(storetest.PolygonTime, storetest.PolygonLaterTime), false},
	}
}

func TestCache_Headers(t *testing.T) {
	s := openCachingServer(t)
	for _, tc := range cacheCases() {
		t.Run(tc.name, func(t *testing.T) {
			resp := s.Do(t, tc.method, tc.path, s.Key, bodyReader(tc.body))
			MustOK(t, resp)
			tag, cc := resp.Header.Get("ETag"), resp.Header.Get("Cache-Control")
			if !tc.deep {
				if tag != "" || cc != "no-cache" {
					t.Errorf("ETag %q, Cache-Control %q; want none and no-cache", tag, cc)
				}
				return
			}
			if !strings.HasPrefix(tag, `"`) || !strings.HasSuffix(tag, `"`) || len(tag) < 10 {
				t.Errorf("ETag %q, want a strong tag", tag)
			}
			if cc != "max-age=3600" {
				t.Errorf("Cache-Control %q, want max-age=3600", cc)
			}
			if !varies(resp, "apikey") || !varies(resp, "Accept-Encoding") {
				t.Errorf("Vary %q, want apikey and Accept-Encoding", resp.Header.Values("Vary"))
			}
			again := s.Do(t, tc.method, tc.path, s.Key, bodyReader(tc.body))
			if again.Header.Get("ETag") != tag {
				t.Errorf("the same answer has two tags: %q and %q", tag, again.Header.Get("ETag"))
			}
		})
	}
	t.Run("OtherAnswersNoCache", func(t *testing.T) {
		for _, path := range []string{"/api/v1/customer/polygon/blocks/latest", blockPath("polygon", "?block_number=1"), "/openapi.json"} {
			if cc := s.Get(t, path).Header.Get("Cache-Control"); cc != "no-cache" {
				t.Errorf("%s: Cache-Control %q, want no-cache", path, cc)
			}
		}
	})
	t.Run("NoConfirmationsNoCache", func(t *testing.T) {
		plain := MustOpenServer(t)
		resp := plain.Get(t, blockPath("polygon", fmt.Sprintf("?block_number=%d", storetest.PolygonBlock)))
		if tag, cc := resp.Header.Get("ETag"), resp.Header.Get("Cache-Control"); tag != "" || cc != "no-cache" {
			t.Errorf("without Config.Confirmations: ETag %q, Cache-Control %q", tag, cc)
		}
	})
}

func bodyReader(body string) io.Reader {
	if body == "" {
		return nil
	}
	return strings.NewReader(body)
}

// TestCache_IfNoneMatch checks the conditional requests of RFC 9110
// §13.1.2: a tag in the list, compared weakly, or * gives 304 with the tag
// and no body; anything else the whole answer.
func TestCache_IfNoneMatch(t *testing.T) {
	s := openCachingServer(t)
	for _, tc := range cacheCases() {
		if !tc.deep {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			first := s.Raw(t, tc.method, tc.path, tc.body)
			tag := first.Header.Get("ETag")
			if first.Status != http.StatusOK || tag == "" {
				t.Fatalf("status %d, ETag %q", first.Status, tag)
			}
			for _, inm := range []string{tag, "W/" + tag, `"nope", ` + tag, `"nope",` + tag + `, "other"`, "*"} {
				resp := s.Raw(t, tc.method, tc.path, tc.body, "If-None-Match", inm)
				if resp.Status != http.StatusNotModified || len(resp.Body) != 0 {
					t.Errorf("If-None-Match %s: status %d with %d bytes, want 304 and no body", inm, resp.Status, len(resp.Body))
					continue
				}
				if resp.Header.Get("ETag") != tag || resp.Header.Get("Cache-Control") != "max-age=3600" || !varies(resp, "apikey") {
					t.Errorf("If-None-Match %s: 304 with ETag %q, Cache-Control %q, Vary %q", inm, resp.Header.Get("ETag"),
						resp.Header.Get("Cache-Control"), resp.Header.Values("Vary"))
				}
			}
			for _, inm := range []string{`"nope"`, strings.Trim(tag, `"`), tag[:len(tag)-2] + `"`, `"nope", ` + tag[:len(tag)-1]} {
				resp := s.Raw(t, tc.method, tc.path, tc.body, "If-None-Match", inm)
				if resp.Status != http.StatusOK || string(resp.Body) != string(first.Body) {
					t.Errorf("If-None-Match %s: status %d, want 200 with the answer", inm, resp.Status)
				}
			}
		})
	}
	t.Run("NotDeepIgnoresIt", func(t *testing.T) {
		resp := s.Raw(t, "GET", blockPath("polygon", fmt.Sprintf("?block_number=%d", storetest.PolygonLaterBlock)), "", "If-None-Match", "*")
		if resp.Status != http.StatusOK || len(resp.Body) == 0 {
			t.Errorf("status %d, want 200 with the answer", resp.Status)
		}
	})
}

// TestCache_Gzip checks that the compressed form of a deep answer has a tag
// of its own: a cache holding one form must not be told it holds the other.
func TestCache_Gzip(t *testing.T) {
	s := openCachingServer(t)
	full := blockPath("polygon", fmt.Sprintf("?block_number=%d&full_transactions=true", storetest.PolygonBlock))
	plain := s.Raw(t, "GET", full, "")
	zipped := s.Raw(t, "GET", full, "", "Accept-Encoding", "gzip")
	ptag, ztag := plain.Header.Get("ETag"), zipped.Header.Get("ETag")
	if zipped.Header.Get("Content-Encoding") != "gzip" || ptag == "" || ztag == "" || ptag == ztag {
		t.Fatalf("Content-Encoding %q, tags %q and %q: want gzip and two different tags", zipped.Header.Get("Content-Encoding"), ptag, ztag)
	}
	if resp := s.Raw(t, "GET", full, "", "Accept-Encoding", "gzip", "If-None-Match", ztag); resp.Status != http.StatusNotModified ||
		resp.Header.Get("ETag") != ztag || resp.Header.Get("Content-Encoding") != "" || len(resp.Body) != 0 {
		t.Errorf("gzip tag, gzip accepted: status %d, ETag %q, Content-Encoding %q, %d bytes; want a bare 304",
			resp.Status, resp.Header.Get("ETag"), resp.Header.Get("Content-Encoding"), len(resp.Body))
	}
	if resp := s.Raw(t, "GET", full, "", "Accept-Encoding", "gzip", "If-None-Match", ptag); resp.Status != http.StatusOK {
		t.Errorf("plain tag, gzip accepted: status %d, want 200", resp.Status)
	}
	if resp := s.Raw(t, "GET", full, "", "If-None-Match", ztag); resp.Status != http.StatusOK {
		t.Errorf("gzip tag, gzip not accepted: status %d, want 200", resp.Status)
	}
	// Below GzipMinBytes nothing is compressed, so the one form has one tag.
	header := blockPath("polygon", fmt.Sprintf("?block_number=%d", storetest.PolygonEmptyBlock))
	a, b := s.Raw(t, "GET", header, ""), s.Raw(t, "GET", header, "", "Accept-Encoding", "gzip")
	if a.Header.Get("ETag") == "" || a.Header.Get("ETag") != b.Header.Get("ETag") || b.Header.Get("Content-Encoding") != "" {
		t.Errorf("small answer: tags %q and %q, Content-Encoding %q; want one tag, plain", a.Header.Get("ETag"), b.Header.Get("ETag"), b.Header.Get("Content-Encoding"))
	}
}

// TestCache_Reorg rewrites a deep block, as a reorg deeper than the
// confirmations (or ingest evm --rewind-to) would: every tag of an answer
// about it changes, and the old tag gets the new answer.
func TestCache_Reorg(t *testing.T) {
	s := openCachingServer(t)
	var deep []cacheCase
	for _, tc := range cacheCases() {
		if tc.deep {
			deep = append(deep, tc)
		}
	}
	before := map[string]Response{}
	for _, tc := range deep {
		before[tc.name] = s.Raw(t, tc.method, tc.path, tc.body)
	}
	blocks := storetest.Blocks()[chainquery.Polygon]
	fork := blocks[0]
	fork.Block.Hash = storetest.H(storetest.TagBlock, 0x99)
	fork.Traces[0].GasUsed++
	fork.Logs[0].Data = append(fork.Logs[0].Data, 0x99)
	fork.Transactions[0].GasUsed++
	if err := s.DB.WriteBlocks(context.Background(), chainquery.Polygon, []*chainquery.BlockData{fork}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range deep {
		t.Run(tc.name, func(t *testing.T) {
			old := before[tc.name]
			resp := s.Raw(t, tc.method, tc.path, tc.body, "If-None-Match", old.Header.Get("ETag"))
			if resp.Status != http.StatusOK || string(resp.Body) == string(old.Body) {
				t.Fatalf("after the rewrite, the old tag: status %d, body changed %v; want 200 with the new answer",
					resp.Status, string(resp.Body) != string(old.Body))
			}
			if tag := resp.Header.Get("ETag"); tag == "" || tag == old.Header.Get("ETag") {
				t.Errorf("ETag %q after the rewrite, %q before", tag, old.Header.Get("ETag"))
			}
		})
	}
}

// TestCache_HeadMoves checks that a block becomes deep once enough blocks are
// indexed above it, within the server's TTL of the head.
func TestCache_HeadMoves(t *testing.T) {
	s := openCachingServer(t)
	path := blockPath("polygon", fmt.Sprintf("?block_number=%d", storetest.PolygonLaterBlock))
	if tag := s.Get(t, path).Header.Get("ETag"); tag != "" {
		t.Fatalf("ETag %q on the latest block", tag)
	}
	next := storetest.Blocks()[chainquery.Polygon][2]
	next.Block.Number++
	next.Block.ParentHash = next.Block.Hash
	next.Block.Hash = storetest.H(storetest.TagBlock, 0x98)
	next.Block.Timestamp += 2
	next.Transactions, next.Logs, next.Traces, next.Block.TransactionCount = nil, nil, nil, 0
	if err := s.DB.WriteBlocks(context.Background(), chainquery.Polygon, []*chainquery.BlockData{next}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(cqhttp.HeadTTL + 5*time.Second)
	for s.Get(t, path).Header.Get("ETag") == "" {
		if time.Now().After(deadline) {
			t.Fatalf("block %d still not cached %s after a block was indexed above it", storetest.PolygonLaterBlock, cqhttp.HeadTTL+5*time.Second)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestCache_Documented checks that the OpenAPI document says which
// operations answer with an ETag and 304, and only those.
func TestCache_Documented(t *testing.T) {
	s := MustOpenServer(t)
	ops := docOperations(openAPI(t, s))
	for name, op := range ops {
		responses := op["responses"].(map[string]any)
		_, has304 := responses["304"]
		headers, _ := responses["200"].(map[string]any)["headers"].(map[string]any)
		_, hasETag := headers["ETag"]
		want := map[string]bool{
			"GET /api/v1/customer/{chain}/block": true, "GET /api/v1/customer/{chain}/blocks/receipts": true,
			"GET /api/v1/customer/{chain}/transactions/{transaction_hash}/logs": true, "POST /api/v1/customer/{chain}/traces/filter": true,
			"GET /api/v1/customer/{chain}/transactions/{transaction_hash}": true, "GET /api/v1/customer/{chain}/blocks/logs": true,
			"GET /api/v1/customer/{chain}/transactions/{transaction_hash}/receipt": true,
			"GET /api/v1/customer/{chain}/transactions/{transaction_hash}/traces":  true,
			"POST /api/v1/customer/{chain}/logs/filter":                            true,
		}[name]
		if has304 != want || hasETag != want {
			t.Errorf("%s: 304 documented %v, ETag documented %v; want %v", name, has304, hasETag, want)
		}
	}
}
