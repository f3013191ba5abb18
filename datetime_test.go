package chainquery_test

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
)

// TestDatetimePattern: DatetimePattern and SnapshotPattern, which the
// OpenAPI document states, take exactly the date-times the service takes:
// every day and non-day (month 00-13, day 00-32) of 400 years and of the
// years at the ends of the range, every hour, minute and second up to a
// value past the last, and every zone offset of two digits. A pattern
// loosened or narrowed by one case fails here.
func TestDatetimePattern(t *testing.T) {
	dt, snap := regexp.MustCompile(chainquery.DatetimePattern), regexp.MustCompile(chainquery.SnapshotPattern)
	check := func(s string, offsetOK bool) {
		t.Helper()
		_, err := time.Parse(time.RFC3339Nano, s)
		want := err == nil && offsetOK
		if got := dt.MatchString(s); got != want {
			t.Errorf("DatetimePattern matches %s: %v; time.Parse: %v", s, got, err)
		}
		_, perr := chainquery.ParseDatetime("x", s)
		if (perr == nil) != want {
			t.Errorf("ParseDatetime(%s): %v, want ok %v", s, perr, want)
		}
	}
	years := []int{0, 1, 99, 100, 400, 9996, 9999}
	for y := 1800; y < 2200; y++ {
		years = append(years, y)
	}
	for _, y := range years {
		for m := 0; m <= 13; m++ {
			for d := 0; d <= 32; d++ {
				check(fmt.Sprintf("%04d-%02d-%02dT00:00:00Z", y, m, d), true)
			}
		}
	}
	for h := 0; h <= 24; h++ {
		for m := 0; m <= 60; m++ {
			for s := 0; s <= 60; s += 5 {
				check(fmt.Sprintf("2024-02-29T%02d:%02d:%02d.5Z", h, m, s), true)
			}
			check(fmt.Sprintf("2024-02-29T%02d:%02d:59Z", h, m), true)
			// datetime_filter: the grid, and the same calendar.
			v := fmt.Sprintf("2024-02-29T%02d:%02d:00Z", h, m)
			_, err := time.Parse(time.RFC3339, v)
			if want := err == nil && m%10 == 0; snap.MatchString(v) != want {
				t.Errorf("SnapshotPattern matches %s: %v, want %v", v, !want, want)
			}
		}
	}
	for h := 0; h <= 99; h++ {
		for m := 0; m <= 60; m++ {
			for _, sign := range []string{"+", "-"} {
				check(fmt.Sprintf("2025-03-01T00:00:00%s%02d:%02d", sign, h, m), h <= 23 && m <= 59)
			}
		}
	}
	for _, v := range []string{"2025-02-29T00:00:00Z", "0000-00-00T00:00:00Z", "1900-02-29T12:00:00Z", "2025-04-31T12:00:00Z"} {
		if snap.MatchString(v) {
			t.Errorf("SnapshotPattern matches %s", v)
		}
		if _, err := chainquery.ParseSnapshotTime(v, time.Now()); err == nil {
			t.Errorf("ParseSnapshotTime takes %s", v)
		}
	}
}
