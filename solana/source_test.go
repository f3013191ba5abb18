package solana_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/solana"
	"github.com/chainquery/chainquery/solana/solanatest"
)

// TestSourceBlocks decodes a block the node first answers null for: its
// changes carry an owner named earlier in the block, leave the others nil
// for the ingester to carry, and Owners says what the block named.
func TestSourceBlocks(t *testing.T) {
	node := solanatest.NewServer(t)
	hash := strings.Repeat("1", 31) + "2" // 32 bytes in base58
	block := strings.Replace(string(synthetic(1000,
		meta("null", nil, []string{bal(0, "5", ownrW)}),                                     // A created, owner named
		meta("null", []string{bal(0, "5", "")}, []string{bal(0, "6", ""), bal(1, "3", "")}), // A and B, no owner named
	)), "{", `{"blockhash":"`+hash+`",`, 1)
	node.AddBlock(10, []byte(block))
	node.NullFor(10, 2)
	c := solana.NewClient(node.URL)
	c.RPC.MinBackoff = time.Millisecond
	src := solana.NewSource(c, nil)
	src.NullWait = time.Millisecond

	got, err := src.Blocks(context.Background(), []uint64{10})
	if err != nil {
		t.Fatal(err)
	}
	b := got[0]
	if b.Slot != 10 || b.Blockhash != hash || !b.Time.Equal(time.Unix(1000, 0)) || len(b.Changes) != 3 {
		t.Fatalf("block %+v", b)
	}
	a, b2 := b.Changes[1], b.Changes[2]
	if a.Account.String() != acctA || a.Amount != 6 || a.Owner == nil || a.Owner.String() != ownrW {
		t.Errorf("A, owner carried within the block: %+v", a)
	}
	if b2.Account.String() != acctB || b2.Owner != nil {
		t.Errorf("B, owner never named: %+v", b2)
	}
	k, _ := chainquery.ParsePublicKey("a", acctA)
	if len(b.Owners) != 1 || b.Owners[k].String() != ownrW {
		t.Errorf("owners %v", b.Owners)
	}

	t.Run("ErrNullForever", func(t *testing.T) {
		node.NullFor(10, 1000)
		src.NullRetries = 2
		if _, err := src.Blocks(context.Background(), []uint64{10}); err == nil || !strings.Contains(err.Error(), "getBlock 10: the node listed the slot but returned no block 3 times") {
			t.Fatalf("err = %v", err)
		}
	})
}
