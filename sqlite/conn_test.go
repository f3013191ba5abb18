package sqlite

import (
	"testing"
	"time"
)

// TestOwnedBytes: a []byte destination takes a blob as it comes, and
// other values as database/sql would have converted them.
func TestOwnedBytes(t *testing.T) {
	var a, b []byte
	var n int64
	dest := []any{&a, &n, &b}
	scan := ownBytes(dest)
	if scan[1] != dest[1] || scan[0] == dest[0] {
		t.Fatalf("scan %v of %v", scan, dest)
	}
	blob := []byte{1, 2}
	for _, c := range []struct {
		src  any
		want string
	}{{blob, "\x01\x02"}, {"text", "text"}, {int64(-7), "-7"}, {1.5, "1.5"}, {true, "true"},
		{time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), "2026-01-02T03:04:05.000000006Z"}} {
		if err := scan[2].(owned).Scan(c.src); err != nil || string(b) != c.want {
			t.Errorf("%#v: %q, %v; want %q", c.src, b, err, c.want)
		}
	}
	if scan[0].(owned).Scan(blob); &a[0] != &blob[0] {
		t.Error("a blob was copied")
	}
	if err := scan[0].(owned).Scan(nil); err != nil || a != nil {
		t.Errorf("NULL: %v, %v", a, err)
	}
}
