package http

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
)

// TestAppendDatetime checks the digit-by-digit datetime against
// time.Time.AppendFormat with chainquery.DatetimeLayout, on the edges of
// days, months, leap years and the four-digit years, and on random
// timestamps.
func TestAppendDatetime(t *testing.T) {
	ts := []int64{0, 1, 59, 60, 3599, 86399, 86400, 951782400, 951868800, 1709164800, 1740787200,
		253402300799, 253402300800, -1, -62135596800, -62135596801}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		ts = append(ts, r.Int64N(253402300800))
	}
	for _, s := range ts {
		want := `"` + time.Unix(s, 0).UTC().Format(chainquery.DatetimeLayout) + `"`
		if got := string(appendDatetime(nil, s)); got != want {
			t.Fatalf("appendDatetime(%d) = %s, want %s", s, got, want)
		}
	}
}
