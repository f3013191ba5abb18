package testenv

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// module is the path in go.mod that marks the repository's root.
const module = "github.com/chainquery/chainquery"

var (
	rootOnce sync.Once
	root     string
	rootErr  error
)

// Root returns the repository's root: the nearest directory at or above the
// working directory whose go.mod declares the module (go test runs in the
// package's directory, anywhere in the tree).
func Root(tb testing.TB) string {
	tb.Helper()
	rootOnce.Do(func() {
		var wd string
		if wd, rootErr = os.Getwd(); rootErr == nil {
			root, rootErr = findRoot(wd)
		}
	})
	if rootErr != nil {
		tb.Fatalf("repository root: %v", rootErr)
	}
	return root
}

func findRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && declares(b, module) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod of module %s in %s or any parent", module, dir)
		}
	}
}

// declares reports whether a go.mod's text declares module mod.
func declares(gomod []byte, mod string) bool {
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" && strings.Trim(f[1], `"`) == mod {
			return true
		}
	}
	return false
}

// Testdata returns the path of parts inside the repository's testdata/
// folder, as stored (a compressed file's path ends in .gz). The folder itself
// must exist; whether the file does is the caller's read to find out.
func Testdata(tb testing.TB, parts ...string) string {
	tb.Helper()
	dir := filepath.Join(Root(tb), "testdata")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		tb.Fatalf("the repository's test data are missing: %s is not a directory (a partial checkout?)", dir)
	}
	return filepath.Join(append([]string{dir}, parts...)...)
}

// ReadTestdata returns the content of the test data file parts names, by its
// plain name: NAME when stored as is, NAME.gz decompressed when stored
// compressed. A name ending in .gz is read and decompressed as named.
func ReadTestdata(tb testing.TB, parts ...string) []byte {
	tb.Helper()
	b, err := readMaybeGzip(Testdata(tb, parts...))
	if err != nil {
		tb.Fatalf("test data: %v", err)
	}
	return b
}

// GlobTestdata returns the plain names (relative to testdata/, slash-separated
// as filepath.Rel gives them) of the files that match pattern, stored as is
// or compressed, in sorted order. It fails tb when nothing matches, so that a
// moved folder cannot make a test pass without reading anything.
func GlobTestdata(tb testing.TB, pattern string) []string {
	tb.Helper()
	dir := Testdata(tb)
	var names []string
	for _, p := range []string{pattern, pattern + ".gz"} {
		paths, err := filepath.Glob(filepath.Join(dir, p))
		if err != nil {
			tb.Fatalf("glob %s: %v", p, err)
		}
		for _, path := range paths {
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				tb.Fatal(err)
			}
			if p != pattern {
				rel = strings.TrimSuffix(rel, ".gz")
			}
			names = append(names, rel)
		}
	}
	if len(names) == 0 {
		tb.Fatalf("no test data match %s in %s", pattern, dir)
	}
	slices.Sort(names)
	return names
}

// readMaybeGzip reads path, or path.gz when path does not exist, and
// decompresses what it read when the name it read ends in .gz.
func readMaybeGzip(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && !strings.HasSuffix(path, ".gz") {
		path += ".gz"
		b, err = os.ReadFile(path)
	}
	if err != nil || !strings.HasSuffix(path, ".gz") {
		return b, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}
