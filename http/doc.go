// Package http serves the chainquery API over HTTP: one route table, one
// authentication step, one mapping of error codes to status codes, and one
// handler file per resource. It reads through Store (store.go), the part of
// the root package's store interfaces the API uses, and never imports a
// store itself.
//
// # Where things are
//
// route.go is the route table, from which both the mux and the OpenAPI
// document (openapi.go, openapi_schema.go) are built. Each endpoint's
// handler, its response type and that type's encoder are in the file of its
// resource: block.go (Get Block, Get Latest Block), transaction.go (Get
// Transaction, Get Transaction Receipt, Get Transaction Traces), log.go (Get
// Transaction Logs, Get Block Logs, Filter Logs), receipt.go (Get Block
// Receipts), trace.go (Filter Traces, and the request body both filters
// share), exports.go (Export Traces, Export Logs), token_balance.go,
// sol_balance.go and status.go. A request passes request_log.go and
// compress.go; a keyed one then auth.go (its API key), ratelimit.go,
// answer_cache.go and share.go (its share of the store, which admission.go
// keeps) before its handler; error.go maps whatever error it returns to a
// status.
//
// # Words
//
// A deep answer is one about blocks at least Config.Confirmations below the
// latest indexed block of their chain. It changes only through a reorg
// deeper than that, which the confirmations are chosen to rule out, so it
// gets a strong ETag and may be cached (etag.go), and the server keeps it in
// its answer cache (answer_cache.go); every other answer says
// Cache-Control: no-cache, so that no cache serves it without asking again.
//
// A chain's head is its latest indexed block as the server last read it; the
// head's bound, the head less the confirmations, is the deepest block an
// answer may be about and still be deep (head.go).
//
// A chain's trace start (Config.TraceStart; the document's and serve's
// --trace-history-start) is the first time Filter Traces serves. It is a
// window of the API, not the store's history: in the store packages,
// history is the compact layout of the blocks below a boundary.
//
// Fair share is how keyed requests share the store: each is admitted to a
// slot (admission.go), and its cost, the time it held the slot, is charged
// to its key's budget (share.go).
//
// An export is the whole result of a Filter Traces or Filter Logs as NDJSON,
// the filter's rows one a line, with a checkpoint line naming a cursor after
// each chunk (chainquery.Export), from which a cut export resumes
// (exports.go).
package http
