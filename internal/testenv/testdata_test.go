package testenv_test

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chainquery/chainquery/internal/testenv"
)

// TestTestdataInRepository finds the test data inside this repository,
// from this package's directory, and nowhere else.
func TestTestdataInRepository(t *testing.T) {
	root := testenv.Root(t)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if rel, err := filepath.Rel(root, wd); err != nil || rel != filepath.Join("internal", "testenv") {
		t.Fatalf("root %s is not two levels above %s", root, wd)
	}
	for _, dir := range []string{"evm", "solana"} {
		if fi, err := os.Stat(testenv.Testdata(t, dir)); err != nil || !fi.IsDir() {
			t.Errorf("testdata/%s: %v", dir, err)
		}
	}
	for _, f := range []string{"README.md", "evm/SOURCES.md", "solana/SOURCES.md"} {
		if _, err := os.Stat(testenv.Testdata(t, f)); err != nil {
			t.Errorf("testdata/%s: %v", f, err)
		}
	}
}

// TestReadTestdata reads a file by its plain name whether it is stored as
// is or compressed, and globs both under their plain names.
func TestReadTestdata(t *testing.T) {
	// A compressed fixture read by its plain name is JSON.
	names := testenv.GlobTestdata(t, filepath.Join("evm", "polygon", "*__38102393__*.json"))
	want := []string{
		"evm/polygon/bor_getAuthor__38102393__chainstorage.json",
		"evm/polygon/debug_traceBlockByHash_callTracer__38102393__chainstorage.json",
		"evm/polygon/eth_getBlockByHash_full__38102393__chainstorage.json",
		"evm/polygon/receipts__38102393__chainstorage.json",
	}
	for i := range names {
		names[i] = filepath.ToSlash(names[i])
	}
	if !slices.Equal(names, want) {
		t.Fatalf("glob: got %q, want %q", names, want)
	}
	stored := 0
	for _, n := range names {
		b := testenv.ReadTestdata(t, n)
		if b = bytes.TrimSpace(b); len(b) == 0 || !strings.ContainsRune(`{["`, rune(b[0])) {
			t.Errorf("%s does not read as JSON: %.40q", n, b)
		}
		if _, err := os.Stat(testenv.Testdata(t, n+".gz")); err == nil {
			stored++
		}
	}
	if stored == 0 {
		t.Error("none of the files is stored compressed: the test no longer covers decompression")
	}
}

// TestReadTestdataGzipByName reads a name ending in .gz as named, and
// decompresses it.
func TestReadTestdataGzipByName(t *testing.T) {
	name := "solana/getBlock/mainnet_getBlock_110130000.full.json.gz"
	b := testenv.ReadTestdata(t, name)
	if !strings.HasPrefix(strings.TrimSpace(string(b)), "{") {
		t.Fatalf("%s not decompressed: %.20q", name, b)
	}
	raw, err := os.ReadFile(testenv.Testdata(t, name))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), b) {
		t.Fatal("decompressed content differs")
	}
}
