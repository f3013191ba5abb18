package evm

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/chainquery/chainquery"
)

// byzantiumBlock is the first Ethereum mainnet block whose receipts carry a
// status (EIP-658). The other seven chains started after Byzantium, so their
// receipts always have one.
const byzantiumBlock = 4_370_000

// FinishStatus settles the status of transactions whose receipts cannot tell
// it: Ethereum mainnet receipts before Byzantium have a state root instead of
// a status, and ApplyReceipts took them as successful. There a transaction
// failed exactly when its top-level trace has an error, so FinishStatus sets
// the status from the traces in d. Call it after ApplyReceipts and the trace
// decoder; without traces the pre-Byzantium transactions stay successful, the
// best the receipts allow. Everywhere else it changes nothing: a receipt's
// status is the chain's own word and wins over any trace.
func FinishStatus(d *chainquery.BlockData) {
	if d == nil || d.Block == nil || d.Block.Chain != chainquery.Ethereum || d.Block.Number >= byzantiumBlock {
		return
	}
	failed := make(map[int]bool, len(d.Transactions))
	for _, t := range d.Traces {
		if len(t.TraceAddress) == 0 {
			failed[t.TransactionIndex] = t.Error != ""
		}
	}
	for _, t := range d.Transactions {
		if f, ok := failed[t.Index]; ok {
			t.Status = !f
		}
	}
}

// CheckComplete returns an error naming what is missing or inconsistent if
// d is not a block the store may take; nil otherwise. It changes nothing.
//
// Every transaction must be in index order (0, 1, ...), Block.TransactionCount
// must count them, and each must have had its receipt applied (ApplyReceipts
// sets EffectiveGasPrice, which DecodeBlock leaves nil). Logs and traces must
// name transactions of d. Trace rows of a transaction must form a tree:
// distinct trace addresses, each child under an existing parent, and each
// parent's subtraces equal to its number of children. With withTraces set,
// every transaction must have exactly one top-level trace, except a polygon
// state-sync transaction, which nodes do not trace by default (it runs no
// EVM call the sender chose).
func CheckComplete(d *chainquery.BlockData, withTraces bool) error {
	if d == nil || d.Block == nil {
		return fmt.Errorf("evm: incomplete block: no header")
	}
	b := d.Block
	fail := func(format string, args ...any) error {
		return fmt.Errorf("evm: block %d incomplete: %s", b.Number, fmt.Sprintf(format, args...))
	}
	if len(d.Transactions) != b.TransactionCount {
		return fail("%d transactions, header counts %d", len(d.Transactions), b.TransactionCount)
	}
	var noReceipt []string
	for i, t := range d.Transactions {
		if t.Index != i {
			return fail("transaction %s has index %d at position %d", t.Hash, t.Index, i)
		}
		if t.EffectiveGasPrice == nil {
			noReceipt = append(noReceipt, t.Hash.Hex())
		}
	}
	if len(noReceipt) > 0 {
		return fail("%d transactions without receipt: %s", len(noReceipt), abbreviate(noReceipt))
	}
	txOf := func(index int, hash chainquery.Hash) bool {
		return index >= 0 && index < len(d.Transactions) && d.Transactions[index].Hash == hash
	}
	type logKey struct{ tx, log int }
	seenLog := make(map[logKey]bool, len(d.Logs))
	for _, l := range d.Logs {
		if !txOf(l.TransactionIndex, l.TransactionHash) {
			return fail("log %d names transaction %s at %d, which the block does not hold", l.LogIndex, l.TransactionHash, l.TransactionIndex)
		}
		k := logKey{l.TransactionIndex, l.LogIndex}
		if seenLog[k] {
			return fail("two logs with index %d in transaction %s", l.LogIndex, l.TransactionHash)
		}
		seenLog[k] = true
	}

	// The traces of each transaction, in their order in d.Traces: counted
	// per transaction, then placed in one list, where a map of lists grew
	// one list per transaction. After placing, the traces of transaction i
	// are byTx[end[i-1]:end[i]] (from 0 for the first).
	end := make([]int, len(d.Transactions))
	for _, t := range d.Traces {
		if !txOf(t.TransactionIndex, t.TransactionHash) {
			return fail("trace %s names transaction %s at %d, which the block does not hold",
				chainquery.FormatTraceAddress(t.TraceAddress), t.TransactionHash, t.TransactionIndex)
		}
		end[t.TransactionIndex]++
	}
	next, most := 0, 0
	for i, n := range end {
		end[i] = next // where transaction i's traces start, until placed
		next += n
		most = max(most, n)
	}
	byTx := make([]*chainquery.Trace, len(d.Traces))
	for _, t := range d.Traces {
		byTx[end[t.TransactionIndex]] = t
		end[t.TransactionIndex]++
	}
	var tc *treeChecker
	var stack []preorderFrame
	start := 0
	for i, tx := range d.Transactions { // tx.Index is i: checked above
		traces := byTx[start:end[i]]
		var ok bool
		if ok, stack = preorderTree(traces, stack); !ok {
			if tc == nil {
				tc = newTreeChecker(most)
			}
			if err := tc.check(traces, traceKeys(traces)); err != nil {
				return fail("traces of %s: %v", tx.Hash, err)
			}
		}
		if withTraces && len(traces) == 0 && !isStateSyncTx(b.Chain, tx) {
			return fail("transaction %s has no top-level trace", tx.Hash)
		}
		start = end[i]
	}
	return nil
}

// preorderFrame is a trace on preorderTree's path from the top-level
// trace, and the index its next child must have.
type preorderFrame struct {
	t    *chainquery.Trace
	next int
}

// preorderTree reports whether traces are one call tree as trace_address
// and subtraces describe it, listed depth first with each call's children
// in order, as nodes list them: then each trace's parent is on the path
// from the top to the trace before it, and one pass with a stack checks
// all that treeChecker does, without its maps (they were half of
// CheckComplete's time). false says only that the traces are not such a
// list: treeChecker then says whether they are a tree. stack is room,
// returned for the next call.
func preorderTree(traces []*chainquery.Trace, stack []preorderFrame) (bool, []preorderFrame) {
	stack = stack[:0]
	for i, t := range traces {
		n := len(t.TraceAddress)
		if (i == 0) != (n == 0) || n > len(stack) {
			return false, stack
		}
		for len(stack) > n {
			if top := stack[len(stack)-1]; top.next != top.t.Subtraces {
				return false, stack
			}
			stack = stack[:len(stack)-1]
		}
		if n > 0 {
			p := &stack[n-1]
			if t.TraceAddress[n-1] != p.next || p.next >= p.t.Subtraces || !slices.Equal(t.TraceAddress[:n-1], p.t.TraceAddress) {
				return false, stack
			}
			p.next++
		}
		stack = append(stack, preorderFrame{t: t})
	}
	for _, f := range stack {
		if f.next != f.t.Subtraces {
			return false, stack
		}
	}
	return true, stack
}

// traceKeys returns the chainquery.FormatTraceAddress text of each trace,
// all made in one string: a string per trace (and another for its
// parent) was most of the allocations of CheckComplete.
func traceKeys(traces []*chainquery.Trace) []string {
	n := 0
	for _, t := range traces {
		n += 3 * len(t.TraceAddress) // up to two digits and a dot each: an estimate
	}
	buf := make([]byte, 0, n)
	keys := make([]string, len(traces))
	ends := make([]int, len(traces))
	for i, t := range traces {
		for j, n := range t.TraceAddress {
			if j > 0 {
				buf = append(buf, '.')
			}
			buf = strconv.AppendInt(buf, int64(n), 10)
		}
		ends[i] = len(buf)
	}
	all, from := string(buf), 0
	for i, to := range ends {
		keys[i], from = all[from:to], to
	}
	return keys
}

// treeChecker checks that the trace rows of one transaction after
// another form one call tree as trace_address and subtraces describe it.
// Its maps serve every transaction of a block, cleared in between.
type treeChecker struct {
	byAddr   map[string]*chainquery.Trace
	children map[string]int
}

// newTreeChecker returns a checker for transactions of at most n traces.
func newTreeChecker(n int) *treeChecker {
	return &treeChecker{byAddr: make(map[string]*chainquery.Trace, n), children: make(map[string]int, n)}
}

// check checks the traces of one transaction; keys are their trace
// addresses as FormatTraceAddress writes them.
func (c *treeChecker) check(traces []*chainquery.Trace, keys []string) error {
	if len(traces) == 0 {
		return nil
	}
	clear(c.byAddr)
	clear(c.children)
	byAddr, children := c.byAddr, c.children
	for i, t := range traces {
		k := keys[i]
		if byAddr[k] != nil {
			return fmt.Errorf("two traces at %q", k)
		}
		byAddr[k] = t
	}
	if byAddr[""] == nil {
		return fmt.Errorf("no top-level trace")
	}
	for i, t := range traces {
		n := len(t.TraceAddress)
		if n == 0 {
			continue
		}
		// The parent's key is the key up to its last dot: numbers have none.
		parent := ""
		if n > 1 {
			parent = keys[i][:strings.LastIndexByte(keys[i], '.')]
		}
		p := byAddr[parent]
		if p == nil {
			return fmt.Errorf("trace %q has no parent", keys[i])
		}
		if last := t.TraceAddress[n-1]; last < 0 || last >= p.Subtraces {
			return fmt.Errorf("trace %q is beyond the %d subtraces of its parent", keys[i], p.Subtraces)
		}
		children[parent]++
	}
	for k, t := range byAddr {
		if children[k] != t.Subtraces {
			return fmt.Errorf("trace %q has %d subtraces but %d children", k, t.Subtraces, children[k])
		}
	}
	return nil
}
