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
	if err != nil || !datetimeRe.MatchString(s) {
		return time.Time{}, Errorf(EINVALID, "%s is not a valid date-time: %s", param, s)
	}
	return t.UTC(), nil
}

// rfc3339 admits only the shapes docs/api.md names ("Request values"); time.Parse alone
// would also take a lowercase t or z and zone offsets up to 99:99. A
// string of that shape that is no date-time (a 13th month, a 30th of
// February) is refused with another message.
var rfc3339 = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$`)

// The calendar in patterns, so that the OpenAPI document states every
// date-time the service takes, not only its shape: a tester generating
// requests from the document's patterns sent 0000-00-00T00:00:00Z, which
// the shape allows and time.Parse refuses. Months 01-12 and each one's
// days, the 29th of February in leap years only (the Gregorian rule:
// years divisible by 4, not by 100 unless by 400), hours 00-23, minutes
// and seconds 00-59, and zone offsets up to 23:59 (RFC 3339's
// time-numoffset; time.Parse alone takes +24:00 and +23:60).
// TestDatetimePattern checks them against time.Parse on every day of
// 400 years.
const (
	datePattern = `(\d{4}-(0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8])|\d{4}-(0[13-9]|1[0-2])-(29|30)|\d{4}-(0[13578]|1[02])-31|` +
		`(\d{2}(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)-02-29)`
	zonePattern = `(Z|[+-]([01]\d|2[0-3]):[0-5]\d)`
	// DatetimePattern is every request datetime ParseDatetime takes.
	DatetimePattern = `^` + datePattern + `T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?` + zonePattern + `$`
	// SnapshotPattern is every datetime_filter on the 10-minute grid that
	// ParseSnapshotTime takes, before its rule on the current time.
	SnapshotPattern = `^` + datePattern + `T([01]\d|2[0-3]):[0-5]0:00` + zonePattern + `$`
)

var datetimeRe, snapshotRe = regexp.MustCompile(DatetimePattern), regexp.MustCompile(SnapshotPattern)

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
	if err != nil || !snapshotRe.MatchString(s) {
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
