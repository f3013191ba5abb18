package solana

import (
	"fmt"

	"github.com/chainquery/chainquery"
)

// SOLChanges returns the SOL balance changes of the block at slot: the
// balance at the block's end of every account whose balance changed in it,
// in the order the accounts first changed. b must have been read with its
// rewards.
//
// A transaction's preBalances and postBalances give the balances of its
// account keys before and after it, failed transactions included (they
// still pay their fee). Rewards change balances outside any transaction,
// and each names the balance after it (postBalance). Where a reward falls
// among the transactions depends on its type, as the recorded blocks show
// (TestSOLChangesBlocks):
//
//   - the leader's fees ("Fee") and the rent handed out to validators
//     ("Rent", positive) are paid when the block is frozen, after every
//     transaction and in the order listed: their balance is the block's
//     last (block 110360000: 1,098 such rewards, each the account's last
//     transaction balance plus the reward);
//   - epoch rewards ("Staking", "Voting") are paid as the block begins, and
//     rent was collected ("Rent", negative) when a transaction loaded the
//     account: for an account a transaction changed, that transaction's
//     balance is the later one.
//
// A transaction without status metadata has unknown balances, which is an
// error rather than a silently wrong history.
func SOLChanges(b *Block, slot uint64) ([]*chainquery.SOLBalanceChange, error) {
	var order []chainquery.PublicKey
	final := map[chainquery.PublicKey]uint64{}
	set := func(k chainquery.PublicKey, lamports uint64) {
		if _, ok := final[k]; !ok {
			order = append(order, k)
		}
		final[k] = lamports
	}
	for i := range b.Transactions {
		tx := &b.Transactions[i]
		m := tx.Meta
		if m == nil {
			return nil, fmt.Errorf("slot %d transaction %d has no status metadata: its SOL balance changes are unknown", slot, i)
		}
		if n := keyCount(tx); len(m.PreBalances) != n || len(m.PostBalances) != n {
			return nil, fmt.Errorf("slot %d transaction %d: %d preBalances and %d postBalances for %d account keys",
				slot, i, len(m.PreBalances), len(m.PostBalances), n)
		}
		// Only the keys whose balance changed are decoded: a vote changes
		// one of its keys, and decoding them all was most of SOLChanges'
		// time (docs/benchmarks.md, "Solana token balances").
		for j, pre := range m.PreBalances {
			if pre == m.PostBalances[j] {
				continue
			}
			k, err := keyAt(tx, j)
			if err != nil {
				return nil, fmt.Errorf("slot %d transaction %d: %w", slot, i, err)
			}
			set(k, m.PostBalances[j])
		}
	}
	byTransactions := len(order)
	changed := make(map[chainquery.PublicKey]bool, byTransactions)
	for _, k := range order {
		changed[k] = true
	}
	for i, r := range b.Rewards {
		if r.Lamports == 0 {
			continue
		}
		k, err := parseKey(r.Pubkey)
		if err != nil {
			return nil, fmt.Errorf("slot %d reward %d: %w", slot, i, err)
		}
		if changed[k] && paidBefore(r) {
			continue // the transaction that changed k has the later balance
		}
		set(k, r.PostBalance)
	}
	t := b.Time()
	out := make([]*chainquery.SOLBalanceChange, len(order))
	for i, k := range order {
		out[i] = &chainquery.SOLBalanceChange{Account: k, Slot: slot, BlockTime: t, Lamports: final[k]}
	}
	return out, nil
}

// paidBefore says whether r is paid before the block's transactions (or as
// one loads the account) rather than when the block is frozen.
func paidBefore(r Reward) bool {
	if r.RewardType == nil {
		return true // unnamed: trust the transactions
	}
	switch *r.RewardType {
	case "Fee":
		return false
	case "Rent":
		return r.Lamports < 0
	}
	return true
}
