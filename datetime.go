package chainquery

import (
	"regexp"
	"time"
)

// Response datetime shapes (docs/api.md, "Response values"): UTC, no zone designator.
const (
	DatetimeLayout        = "2006-01-02T15:04:05"
	BalanceDatetimeLayout = "2006-01-02 15:04:05.000"
)

// FormatDatetime returns the unix time ts in the shape of the datetime fields
// of traces, logs, receipts and blocks.
func FormatDatetime(ts int64) string { return time.Unix(ts, 0).UTC().Format(DatetimeLayout) }

// FormatBalanceDatetime returns t in the shape of the token balance datetimes.
func FormatBalanceDatetime(t time.Time) string { return t.UTC().Format(BalanceDatetimeLayout) }

// ParseDatetime parses an RFC 3339 request datetime with a required zone (Z or
// an offset), with or without fractional seconds. It returns EINVALID naming
// param otherwise.
func ParseDatetime(param, s string) (time.Time, error) {
	if !rfc3339.MatchString(s) {
		return time.Time{}, Errorf(EINVALID, "%s must be an ISO 8601 date-time with a timezone (Z or an offset such as +02:00), e.g. 2025-01-01T00:00:00Z", param)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, Errorf(EINVALID, "%s is not a valid date-time: %s", param, s)
	}
	return t.UTC(), nil
}

// rfc3339 admits only the shapes docs/api.md names ("Request values"); time.Parse alone
// would also take a lowercase t or z and zone offsets up to 99:99.
var rfc3339 = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$`)

// snapshotGrid is the datetime_filter rule of Token Balance by Account (docs/api.md).
var snapshotGrid = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:(00|10|20|30|40|50):00(Z|[+-]\d{2}:\d{2})$`)

// SnapshotLag is how far behind the current time a balance snapshot must be.
const SnapshotLag = time.Hour

// ParseSnapshotTime parses datetime_filter: on the 10-minute grid, with a
// zone, and not later than now - SnapshotLag. It returns EINVALID otherwise.
func ParseSnapshotTime(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, Errorf(EINVALID, "datetime_filter is required")
	}
	if !snapshotGrid.MatchString(s) {
		return time.Time{}, Errorf(EINVALID, "datetime_filter must be on the 10-minute grid with a timezone: YYYY-MM-DDTHH:MM:00 with minutes 00, 10, 20, 30, 40 or 50 and Z or an offset, e.g. 2025-06-01T12:00:00Z")
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, Errorf(EINVALID, "datetime_filter is not a valid date-time: %s", s)
	}
	if t.After(now) {
		return time.Time{}, Errorf(EINVALID, "datetime_filter must not be in the future")
	}
	if t.After(now.Add(-SnapshotLag)) {
		// The suggestion must itself pass: on the grid, with a zone.
		latest := now.Add(-SnapshotLag).UTC().Truncate(10 * time.Minute)
		return time.Time{}, Errorf(EINVALID, "datetime_filter must not fall within the last hour (data processing lag); use %s or earlier", latest.Format(time.RFC3339))
	}
	return t.UTC(), nil
}
