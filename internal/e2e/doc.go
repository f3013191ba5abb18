// Package e2e holds the end-to-end tests: a real anvil node sends varied
// transactions, the real ingester fills a real SQLite store, the real HTTP
// server answers, and every answer is compared field by field with what the
// node itself says.
package e2e
