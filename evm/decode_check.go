package evm

import (
	"fmt"

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

	byTx := make(map[int][]*chainquery.Trace)
	for _, t := range d.Traces {
		if !txOf(t.TransactionIndex, t.TransactionHash) {
			return fail("trace %s names transaction %s at %d, which the block does not hold",
				chainquery.FormatTraceAddress(t.TraceAddress), t.TransactionHash, t.TransactionIndex)
		}
		byTx[t.TransactionIndex] = append(byTx[t.TransactionIndex], t)
	}
	for _, tx := range d.Transactions {
		traces := byTx[tx.Index]
		if err := checkTraceTree(traces); err != nil {
			return fail("traces of %s: %v", tx.Hash, err)
		}
		if withTraces && len(traces) == 0 && !isStateSyncTx(b.Chain, tx) {
			return fail("transaction %s has no top-level trace", tx.Hash)
		}
	}
	return nil
}

// checkTraceTree checks that the trace rows of one transaction form one
// call tree as trace_address and subtraces describe it.
func checkTraceTree(traces []*chainquery.Trace) error {
	if len(traces) == 0 {
		return nil
	}
	byAddr := make(map[string]*chainquery.Trace, len(traces))
	for _, t := range traces {
		k := chainquery.FormatTraceAddress(t.TraceAddress)
		if byAddr[k] != nil {
			return fmt.Errorf("two traces at %q", k)
		}
		byAddr[k] = t
	}
	if byAddr[""] == nil {
		return fmt.Errorf("no top-level trace")
	}
	children := make(map[string]int, len(traces))
	for _, t := range traces {
		n := len(t.TraceAddress)
		if n == 0 {
			continue
		}
		parent := chainquery.FormatTraceAddress(t.TraceAddress[:n-1])
		p := byAddr[parent]
		if p == nil {
			return fmt.Errorf("trace %q has no parent", chainquery.FormatTraceAddress(t.TraceAddress))
		}
		if last := t.TraceAddress[n-1]; last < 0 || last >= p.Subtraces {
			return fmt.Errorf("trace %q is beyond the %d subtraces of its parent", chainquery.FormatTraceAddress(t.TraceAddress), p.Subtraces)
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
