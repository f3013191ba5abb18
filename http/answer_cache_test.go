package http_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/internal/storetest"
)

// answerReads is the real store, counting the reads of the answers the
// answer cache may keep.
type answerReads struct {
	cqhttp.Store
	reads atomic.Int64
}

func (s *answerReads) FindBlock(ctx context.Context, c chainquery.Chain, n uint64, full bool) (*chainquery.Block, error) {
	s.reads.Add(1)
	return s.Store.FindBlock(ctx, c, n, full)
}

func (s *answerReads) FindBlockReceipts(ctx context.Context, f chainquery.ReceiptFilter) ([]*chainquery.Receipt, int, error) {
	s.reads.Add(1)
	return s.Store.FindBlockReceipts(ctx, f)
}

func (s *answerReads) FindTransactionLogs(ctx context.Context, f chainquery.LogFilter) ([]*chainquery.Log, int, error) {
	s.reads.Add(1)
	return s.Store.FindTransactionLogs(ctx, f)
}

func (s *answerReads) FindTraces(ctx context.Context, f chainquery.TraceFilter) ([]*chainquery.Trace, int, error) {
	s.reads.Add(1)
	return s.Store.FindTraces(ctx, f)
}

// openAnswerCacheServer is openCachingServer (with the answer cache) on a
// store that counts its answer reads.
func openAnswerCacheServer(tb testing.TB) (*Server, *answerReads) {
	var cs *answerReads
	s := MustOpenServer(tb, func(c *cqhttp.Config) {
		cs = &answerReads{Store: c.Store}
		c.Store = cs
		c.Confirmations = map[chainquery.Chain]uint64{chainquery.Polygon: 1}
		c.AnswerCacheBytes = 1 << 20
		c.Metrics = true
	})
	return s, cs
}

// TestAnswerCache_Serves checks that a deep answer is read from the store
// once and then served from memory, byte for byte with the same headers,
// gzip and 304 included, while every other answer is read each time.
func TestAnswerCache_Serves(t *testing.T) {
	s, store := openAnswerCacheServer(t)
	for _, tc := range cacheCases() {
		t.Run(tc.name, func(t *testing.T) {
			MustOK(t, s.Do(t, tc.method, tc.path, s.Key, bodyReader(tc.body))) // as a client sends it, checked against the document
			first := s.Raw(t, tc.method, tc.path, tc.body)
			before := store.reads.Load()
			again := s.Raw(t, tc.method, tc.path, tc.body)
			if first.Status != http.StatusOK || again.Status != http.StatusOK {
				t.Fatalf("status %d then %d", first.Status, again.Status)
			}
			if reads := store.reads.Load() - before; (reads == 0) != tc.deep {
				t.Fatalf("the request again read the store %d times; deep %v", reads, tc.deep)
			}
			if string(again.Body) != string(first.Body) {
				t.Fatalf("the second answer differs:\n%s\n%s", first.Body, again.Body)
			}
			for _, h := range []string{"ETag", "Cache-Control", "Content-Type", "Content-Length", "Vary"} {
				if first.Header.Get(h) != again.Header.Get(h) {
					t.Errorf("%s: %q then %q", h, first.Header.Get(h), again.Header.Get(h))
				}
			}
			if !tc.deep {
				return
			}
			tag := first.Header.Get("ETag")
			zipped := s.Raw(t, tc.method, tc.path, tc.body, "Accept-Encoding", "gzip")
			if ce := zipped.Header.Get("Content-Encoding"); zipped.Status != http.StatusOK ||
				ce == "gzip" && zipped.Header.Get("ETag") != tag[:len(tag)-1]+`-gzip"` ||
				ce == "" && (string(zipped.Body) != string(first.Body) || zipped.Header.Get("ETag") != tag) {
				t.Errorf("with gzip accepted: status %d, Content-Encoding %q, ETag %q (plain %q)", zipped.Status, ce, zipped.Header.Get("ETag"), tag)
			}
			if resp := s.Raw(t, tc.method, tc.path, tc.body, "If-None-Match", tag); resp.Status != http.StatusNotModified {
				t.Errorf("If-None-Match with the tag: status %d, want 304", resp.Status)
			}
			if reads := store.reads.Load() - before; reads != 0 {
				t.Errorf("gzip and 304 read the store again: %d reads", reads)
			}
		})
	}
}

// TestAnswerCache_KeyFirst checks that a kept answer goes only to requests
// whose key may have it: the key is checked before the cache.
func TestAnswerCache_KeyFirst(t *testing.T) {
	s, _ := openAnswerCacheServer(t)
	path := blockPath("polygon", fmt.Sprintf("?block_number=%d", storetest.PolygonBlock))
	MustOK(t, s.Get(t, path))
	for _, tc := range []struct {
		name, key string
		status    int
	}{
		{"NoKey", NoKey, http.StatusUnauthorized},
		{"Revoked", s.RevokedKey, http.StatusUnauthorized},
		{"Unknown", "cq_unknown", http.StatusUnauthorized},
		{"NotEnabled", s.LogsKey, http.StatusForbidden},
	} {
		if resp := s.Do(t, http.MethodGet, path, tc.key, nil); resp.Status != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, resp.Status, tc.status)
		}
	}
}

// TestAnswerCache_Rewrites rewrites blocks as a reorg, or ingest evm
// --rewind-to in another process, would: answers about the heights
// rewritten are read again within TipTTL, and those below stay kept.
func TestAnswerCache_Rewrites(t *testing.T) {
	s, store := openAnswerCacheServer(t)
	blocks := storetest.Blocks()[chainquery.Polygon]
	deepPath := blockPath("polygon", fmt.Sprintf("?block_number=%d", storetest.PolygonBlock))
	nextPath := blockPath("polygon", fmt.Sprintf("?block_number=%d", storetest.PolygonEmptyBlock))
	deep, next := MustOK(t, s.Get(t, deepPath)), MustOK(t, s.Get(t, nextPath))

	// A rewrite of the block above: the first block's answer stays kept.
	fork := blocks[1]
	fork.Block.Hash = storetest.H(storetest.TagBlock, 0x97)
	if err := s.DB.ReplaceBlocks(context.Background(), chainquery.Polygon, fork.Block.Number, []*chainquery.BlockData{fork, blocks[2]}); err != nil {
		t.Fatal(err)
	}
	waitChanged(t, s, nextPath, next)
	before := store.reads.Load()
	if got := MustOK(t, s.Get(t, deepPath)); string(got) != string(deep) || store.reads.Load() != before {
		t.Errorf("the answer about block %d, below the rewrite, was read again", storetest.PolygonBlock)
	}

	// A rewrite in place of the first block, as WriteBlocks of a stored height.
	first := blocks[0]
	first.Block.Hash = storetest.H(storetest.TagBlock, 0x96)
	if err := s.DB.WriteBlocks(context.Background(), chainquery.Polygon, []*chainquery.BlockData{first}); err != nil {
		t.Fatal(err)
	}
	waitChanged(t, s, deepPath, deep)
}

// waitChanged asks for path until its answer is no longer old, for at most
// TipTTL and a margin for a busy machine.
func waitChanged(t *testing.T, s *Server, path string, old []byte) {
	t.Helper()
	deadline := time.Now().Add(cqhttp.HeadTTL + 5*time.Second)
	for string(MustOK(t, s.Get(t, path))) == string(old) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: the old answer still served %s after the rewrite", path, cqhttp.HeadTTL+5*time.Second)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAnswerCache_Metrics checks the lookups counter on /metrics.
func TestAnswerCache_Metrics(t *testing.T) {
	s, _ := openAnswerCacheServer(t)
	path := blockPath("polygon", fmt.Sprintf("?block_number=%d", storetest.PolygonBlock))
	for range 3 {
		MustOK(t, s.Get(t, path))
	}
	text := string(s.Do(t, http.MethodGet, "/metrics", NoKey, nil).Body)
	for _, want := range []string{`chainquery_http_answer_cache_lookups_total{result="hit"} 2` + "\n", `chainquery_http_answer_cache_lookups_total{result="miss"} 1` + "\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
