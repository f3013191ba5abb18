package sqlstore

import (
	"math"

	"github.com/chainquery/chainquery"
)

// PlanQuery is one statement whose plan a store's TestQueryPlans checks
// and documents. The list of them (PlanQueries) stands here, beside the
// statements it names, so that a statement added to the store is added to
// the plan tests of both dialects in one place.
type PlanQuery struct {
	Name string
	SQL  string
	Args []any

	// Walks is how many index walks a Filter Traces page merges (one per
	// address walked), which bounds the sorts its plan may hold; the same
	// for the walks of trace_counts that add up several addresses.
	Walks int

	// IndexOnly is a read of a range of blocks' counts or stamps, which an
	// index holds (blocks_counts, migration 0026): the plan must read it
	// alone, not the blocks' rows.
	IndexOnly bool
}

// PlanArgs are the values a store's TestQueryPlans binds: any will do where
// the plan does not depend on them; PostgreSQL's custom plans do, so there
// they pick rows of the loaded data.
type PlanArgs struct {
	Chain      int64
	Time       int64 // unix seconds: the datetime range's seeks
	TxHash     []byte
	Block      int64 // a block holding TxHash, with transaction TxIndex
	TxIndex    int
	Account    []byte // a token account
	Owner      []byte // an owner of token accounts
	At         int64  // unix milliseconds: the balance snapshot
	Mint       []byte
	APIKeyHash []byte
}

// PlanQueries returns every read the API and the ingesters make, with d's
// statements and the shared ones bound for d: the Filter Traces count and page of a block range
// (lo to hi, page) without addresses, with two senders (x, y), two
// recipients, and a sender and a recipient, and the statements on
// trace_counts of those that count by buckets; then each other read, with
// a. The range should hold a whole bucket (TraceCountBlocks).
func PlanQueries(d *Dialect, lo, hi uint64, page chainquery.Page, x, y chainquery.Address, a PlanArgs) []PlanQuery {
	pageFirst := int64(lo / TraceCountBlocks)
	bind := func(q string) string { return q }
	if d.Bind != nil {
		bind = d.Bind
	}
	var out []PlanQuery
	for _, c := range []struct {
		name       string
		from, to   []chainquery.Address
		recipients bool // a from+to filter walking the recipients
	}{
		{"no address", nil, nil, false},
		{"from_address (2)", []chainquery.Address{x, y}, nil, false},
		{"to_address (2)", nil, []chainquery.Address{x, y}, false},
		{"from_address and to_address", []chainquery.Address{x}, []chainquery.Address{y}, false},
		{"from_address and to_address, walking the recipients", []chainquery.Address{x}, []chainquery.Address{y}, true},
	} {
		p := NewTracePlan(a.Chain, lo, hi, chainquery.TraceFilter{FromAddresses: c.from, ToAddresses: c.to, Page: page})
		if c.recipients {
			p.WalkRecipients()
		}
		count, countArgs := d.CountTraces(p)
		count = bind(count)
		pageSQL, pageArgs := d.TracePage(p)
		out = append(out,
			PlanQuery{Name: "Filter Traces count, " + c.name, SQL: count, Args: countArgs, IndexOnly: len(p.Walk) == 0},
			PlanQuery{Name: "Filter Traces page, " + c.name, SQL: pageSQL, Args: pageArgs, Walks: len(p.Walk)})
		if p.Bucketed() {
			sum, sumArgs := d.TraceBucketSum(p)
			buckets, bucketArgs := d.TraceBuckets(p)
			out = append(out,
				PlanQuery{Name: "Filter Traces count of whole buckets, " + c.name, SQL: sum, Args: sumArgs},
				// Several addresses' buckets are added up bucket by bucket: a
				// sort of their rows in the range.
				PlanQuery{Name: "Filter Traces offset by buckets, " + c.name, SQL: buckets, Args: bucketArgs, Walks: len(p.Walk)})
		}
	}
	var hash chainquery.Hash
	copy(hash[:], a.TxHash)
	block := uint64(a.Block)
	logTx, logTxArgs := d.LogTransaction(a.Chain, hash, nil)
	logTxIn, logTxInArgs := d.LogTransaction(a.Chain, hash, &block)
	if d.LogTransactionPage != nil {
		logPage, logPageArgs := d.LogTransactionPage(a.Chain, hash, nil, 10, 0)
		logPageIn, logPageInArgs := d.LogTransactionPage(a.Chain, hash, &block, 10, 0)
		out = append(out,
			PlanQuery{Name: "Get Transaction Logs: the transaction and the page", SQL: logPage, Args: logPageArgs},
			PlanQuery{Name: "Get Transaction Logs: the transaction in a given block and the page", SQL: logPageIn, Args: logPageInArgs})
	}
	tx, txArgs := d.Transaction(a.Chain, hash, nil)
	txIn, txInArgs := d.Transaction(a.Chain, hash, &block)
	var txHash chainquery.Hash // a.TxHash, 32 bytes or none
	copy(txHash[:], a.TxHash)
	out = append(out,
		PlanQuery{Name: "Get Transaction (and its receipt and traces): the transaction", SQL: tx, Args: txArgs},
		PlanQuery{Name: "Get Transaction (and its receipt and traces): the transaction in a given block", SQL: txIn, Args: txInArgs},
		PlanQuery{Name: "Get Transaction in history: the blocks of its hash prefix", SQL: bind(qHistoryTxRuns),
			Args: []any{a.Chain, HashPrefix(txHash), int64(-1), int64(memRunEntries), int64(math.MaxInt64)}},
		PlanQuery{Name: "Get Transaction in history: the blocks of its hash prefix, in a given block", SQL: bind(qHistoryTxRuns),
			Args: []any{a.Chain, HashPrefix(txHash), a.Block, int64(memRunEntries), int64(math.MaxInt64)}},
		PlanQuery{Name: "Get Transaction in history: a run of the hash index read whole into memory", SQL: bind(qRunAllPages), Args: []any{a.Chain, int64(1)}},
		PlanQuery{Name: "Get Transaction Traces: the count", SQL: d.TransactionTraceCount, Args: []any{a.Chain, a.Block, a.TxIndex}},
		PlanQuery{Name: "Get Transaction Traces: the page", SQL: d.TransactionTraces, Args: []any{a.Chain, a.Block, a.TxIndex, 10, 0}},
		PlanQuery{Name: "Get Block Logs: the block and its log count", SQL: bind(qBlockLogCount), Args: []any{a.Chain, a.Block}},
		PlanQuery{Name: "Get Block Logs: the page", SQL: d.BlockLogPage, Args: []any{a.Chain, a.Block, 10, 0}},
	)
	// Across two partitions of logs (PostgreSQL) a page's rows are
	// appended and sorted: one walk, of the range's matching logs (at most
	// 100 blocks').
	var topic chainquery.Hash
	for _, lf := range []struct {
		name string
		f    chainquery.LogRangeFilter
	}{
		{"no condition", chainquery.LogRangeFilter{}},
		{"an address and two topic0s", chainquery.LogRangeFilter{Addresses: []chainquery.Address{x}, Topics: [4][]chainquery.Hash{{topic, {1}}}}},
		{"two addresses", chainquery.LogRangeFilter{Addresses: []chainquery.Address{x, {2}}}},
		{"a topic0 and a topic2", chainquery.LogRangeFilter{Topics: [4][]chainquery.Hash{{topic}, nil, {{3}}}}},
	} {
		count, countArgs := d.RangeLogCount(a.Chain, int64(lo), int64(hi), &lf.f)
		pageSQL, pageArgs := d.RangeLogPage(a.Chain, int64(lo), int64(hi), &lf.f, 10, 0)
		out = append(out,
			PlanQuery{Name: "Filter Logs count, " + lf.name, SQL: count, Args: countArgs},
			PlanQuery{Name: "Filter Logs page, " + lf.name, SQL: pageSQL, Args: pageArgs, Walks: 1})
	}
	counts, countsArgs := d.LogPostingCounts(a.Chain, 0, [][]byte{x[:]}, 1, 500)
	pairLo, pairHi := pairKeyRange(x[:])
	topics, topicsArgs := d.LogTopics(a.Chain, [][]byte{x[:]}, 1, 500)
	tagged, taggedArgs := d.LogTaggedPostings(a.Chain, [][]byte{x[:], {2}}, 7, 8)
	lists, listsArgs := d.LogPostings(a.Chain, 0, [][]byte{x[:], {2}}, 7, 8)
	longLists, longListsArgs := d.LogPostings(a.Chain, 1, [][]byte{topic[:]}, 7, 20)
	var prefix PlanQuery
	if d.LogPostingsPrefix != nil {
		q, args := d.LogPostingsPrefix(a.Chain, 0, [][]byte{x[:]}, 7, 8, 1312)
		prefix = PlanQuery{Name: "History log postings: the starts of an address's lists in two buckets", SQL: q, Args: args}
	}
	seekArgs := []any{a.Chain, a.Time, a.Time + 200, a.Time - 1000}
	stamps, stampsArgs := d.HistoryStamps(a.Chain, []uint64{lo, lo + 1, hi})
	rowCount, rowCountArgs := d.LogRowCount(a.Chain, []int64{0, 1}, 0, [][]byte{x[:], {2}})
	out = append(out,
		PlanQuery{Name: "Log counts of the rows: two addresses in two buckets", SQL: rowCount, Args: rowCountArgs},
		PlanQuery{Name: "History log postings: the matches of each bucket of 500", SQL: counts, Args: countsArgs},
		PlanQuery{Name: "History log postings: an address's topic0s in each bucket of 500", SQL: topics, Args: topicsArgs},
		PlanQuery{Name: "History log postings: the lists and topic0s of two addresses in two buckets", SQL: tagged, Args: taggedArgs},
		PlanQuery{Name: "History log postings: the lists of two addresses in two buckets", SQL: lists, Args: listsArgs},
		PlanQuery{Name: "History log postings: the lists of a topic0 in 14 buckets", SQL: longLists, Args: longListsArgs})
	if prefix.SQL != "" {
		out = append(out, prefix)
	}
	return append(out,
		PlanQuery{Name: "Filter Traces offset by blocks", SQL: bind(qBlockTraceCounts), Args: []any{a.Chain, int64(lo), int64(hi)}, IndexOnly: true},
		PlanQuery{Name: "Filter Logs without a condition: the blocks' log counts and stamps", SQL: bind(qBlockLogCounts), Args: []any{a.Chain, int64(lo), int64(hi)}, IndexOnly: true},
		PlanQuery{Name: "History blocks' stamps", SQL: stamps, Args: stampsArgs, IndexOnly: true},
		// The pages of history's trace lists (trace_pages.go): each names
		// the stretches of trace_pages_key it reads, which the plan must
		// search by. Their rows, one a page and bucket, may be sorted by
		// bucket: two pages' on both stores, and one page's on PostgreSQL
		// 15, which does not keep the key's order across the values of
		// an = ANY search (SQLite does).
		PlanQuery{Name: "History trace pages: one address's page over 30 buckets", SQL: bind(pagesSQL([]int{17}, pageFirst, pageFirst+29, true)), Args: []any{a.Chain, 1, pageFirst, pageFirst + 29}, Walks: 1},
		PlanQuery{Name: "History trace pages: two addresses' pages over 30 buckets", SQL: bind(pagesSQL([]int{17, 30}, pageFirst, pageFirst+29, false)), Args: []any{a.Chain, 0, pageFirst, pageFirst + 29}, Walks: 1},
		PlanQuery{Name: "Ingester: a bucket's trace pages", SQL: bind(qBucketPages), Args: []any{a.Chain, pageFirst, stretchOf(pageFirst)}},
		// The counts of epochs (trace_epochs.go): an address's over 100
		// epochs is one search of the key; an epoch is written from
		// the keys of its buckets' pages, a stretch of parts at a time.
		PlanQuery{Name: "History trace epochs: one address's counts over 100 epochs", SQL: bind(epochCountsSQL([]int{17})), Args: []any{a.Chain, 1, int64(3), int64(102)}, Walks: 1},
		PlanQuery{Name: "History trace epochs: two addresses' counts over 100 epochs", SQL: bind(epochCountsSQL([]int{17, 30})), Args: []any{a.Chain, 0, int64(3), int64(102)}, Walks: 1},
		PlanQuery{Name: "Filter Traces: the boundaries of history and of its epochs", SQL: bind(traceBounds.alone), Args: []any{a.Chain}},
		PlanQuery{Name: "History bounds of Filter Traces over a datetime range, with its seeks", SQL: bind(traceBounds.seeking), Args: seekArgs},
		PlanQuery{Name: "History bounds of Filter Logs: its counts, lists and epochs", SQL: bind(logBounds.alone), Args: []any{a.Chain}},
		PlanQuery{Name: "History bounds of Filter Logs over a datetime range, with its seeks", SQL: bind(logBounds.seeking), Args: seekArgs},
		PlanQuery{Name: "Ingester: an epoch's trace pages, 64 parts of a direction", SQL: bind(epochPagesSQL(pageFirst/TraceEpochBuckets*TraceEpochBuckets, pageFirst/TraceEpochBuckets*TraceEpochBuckets+TraceEpochBuckets-1)),
			Args: []any{a.Chain, 1, 64, 127, pageFirst / TraceEpochBuckets * TraceEpochBuckets, pageFirst/TraceEpochBuckets*TraceEpochBuckets + TraceEpochBuckets - 1}},
		PlanQuery{Name: "Ingester: a bucket's trace pages taken in, deleted", SQL: bind(deletePagesSQL([]int{17, 30})), Args: []any{a.Chain, pageFirst, stretchOf(pageFirst), 1}},
		// The log lists' forms (log_forms.go), read by a write that
		// continues a bucket.
		PlanQuery{Name: "Ingester: the split rows of a log bucket (its pairs' keys)", SQL: bind(qPairKeys), Args: []any{a.Chain, int64(7)}},
		PlanQuery{Name: "Ingester: an address's log list", SQL: bind(qAddressRow), Args: []any{a.Chain, int64(7), x[:]}},
		PlanQuery{Name: "Ingester: an address's pairs' log lists", SQL: bind(qPairRows), Args: []any{a.Chain, int64(7), pairLo, pairHi}},
		PlanQuery{Name: "Ingester: an address's log list, deleted", SQL: bind(qDeleteAddressRow), Args: []any{a.Chain, int64(7), x[:]}},
		PlanQuery{Name: "Ingester: an address's pairs' log lists, deleted", SQL: bind(qDeletePairRows), Args: []any{a.Chain, int64(7), pairLo, pairHi}},
		PlanQuery{Name: "datetime range start", SQL: bind(qFirstBlockAtOrAfter), Args: []any{a.Chain, a.Time}},
		PlanQuery{Name: "datetime range end", SQL: bind(qLastBlockAtOrBefore), Args: []any{a.Chain, a.Time}},
		PlanQuery{Name: "Get Transaction Logs: the transaction", SQL: logTx, Args: logTxArgs},
		PlanQuery{Name: "Get Transaction Logs: the transaction in a given block", SQL: logTxIn, Args: logTxInArgs},
		PlanQuery{Name: "Get Transaction Logs: the page", SQL: bind(qLogPage), Args: []any{a.Chain, a.Block, a.TxIndex, 10, 0}},
		PlanQuery{Name: "Get Block Receipts: the block and the page", SQL: bind(qReceiptBlockPage), Args: []any{a.Chain, a.Block, 10, 0}},
		PlanQuery{Name: "Get Block Receipts: the block", SQL: bind(qReceiptBlock), Args: []any{a.Chain, a.Block}},
		PlanQuery{Name: "Get Block Receipts: the page", SQL: bind(qReceiptPage), Args: []any{a.Chain, a.Block, 10, 0}},
		PlanQuery{Name: "Get Block", SQL: bind(qBlock), Args: []any{a.Chain, a.Block}},
		PlanQuery{Name: "Get Block: transactions", SQL: bind(qBlockTransactions), Args: []any{a.Chain, a.Block}},
		PlanQuery{Name: "Get Latest Block", SQL: bind(qLatestBlock), Args: []any{a.Chain}},
		PlanQuery{Name: "Token Balance by Account, with its token", SQL: d.TokenBalance, Args: []any{a.Account, a.At, true}},
		PlanQuery{Name: "SOL Balance by Account", SQL: d.SOLBalance, Args: []any{a.Account, a.At}},
		// The owner's accounts, found in account order by a skip scan, are
		// sorted for the page's LIMIT (neither planner knows the recursion
		// keeps that order): one walk, bounded by the owner's accounts.
		PlanQuery{Name: "Token Balances by Owner: the owner's number of token holdings", SQL: d.OwnerBalanceCount, Args: []any{a.Owner, a.At}, Walks: 1},
		PlanQuery{Name: "Token Balances by Owner: the page, with the tokens", SQL: d.OwnerBalancePage, Args: []any{a.Owner, a.At, true, 10, 0}, Walks: 1},
		PlanQuery{Name: "API key lookup", SQL: bind(qAPIKeyByHash), Args: []any{a.APIKeyHash}},
		PlanQuery{Name: "Ingester: block hash", SQL: bind(qBlockHash), Args: []any{a.Chain, a.Block}},
		PlanQuery{Name: "Indexing status: the chain's first and last block", SQL: bind(qChainExtent), Args: []any{a.Chain}},
		PlanQuery{Name: "Indexing status: the block about 100 below the last", SQL: bind(qBlockAtOrBelow), Args: []any{a.Chain, a.Block}},
		PlanQuery{Name: "Indexing status: the first block holding a trace", SQL: bind(tracesFromSQL(d)), Args: []any{a.Chain}},
	)
}
