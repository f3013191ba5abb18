// Package driverbench compares SQLite drivers on the store's own block
// writes (BenchmarkDrivers: the same Polygon-shaped blocks, the same schema
// (sqlite's migrations), pragmas and multi-row INSERTs) and on its heaviest
// reads (BenchmarkDriverReads: the store's own statements on a database the
// store wrote), through the pure-Go modernc.org/sqlite the project uses and
// the cgo github.com/mattn/go-sqlite3.
// It is a module of its own so that the cgo driver never enters the
// project's go.mod; run it with
//
//	cd internal/driverbench && go test -run '^$' -bench . -benchtime 3x
package driverbench
