package solanareplay

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// The recorded data are embedded, not read from testdata/solana, so that
// chainquery dev works from the built binary in any folder, with no
// checkout beside it and no network. Only what the replay needs is here:
// the complete mainnet block 110360000 (gzipped as recorded, 0.99 MB: the
// newer of the two complete blocks, whose token balances carry their owner)
// and the token list subset (0.16 MB) for the registry. Both are byte-for-byte
// copies of testdata/solana/getBlock/mainnet_getBlock_110360000.full.json.gz
// and testdata/solana/tokenlist/solana.tokenlist.subset.json, whose
// provenance and licences testdata/solana/SOURCES.md gives (the block comes
// from a GPL-3.0 repository); TestEmbeddedCopies keeps them equal. Git
// stores identical files once, so the copies cost the repository nothing.

//go:embed mainnet_getBlock_110360000.full.json.gz
var mainnetBlock []byte

//go:embed solana.tokenlist.subset.json
var tokenList []byte

const (
	// MainnetSlot is the slot of the recorded block.
	MainnetSlot = 110360000

	// MainnetBlockTime is the recorded block's blockTime,
	// 2021-12-06T21:13:48Z: written here so that Mainnet need not read
	// 7.6 MB of JSON for it.
	MainnetBlockTime = 1638825228

	// TailSlot is the slot of the empty block Mainnet adds an hour after
	// the recorded one, at about mainnet's 0.6 s a slot. Stored balances
	// answer only up to the time of the last stored block, so without it
	// no 10-minute snapshot would see the recorded block's changes: it
	// stands for the blocks that followed on mainnet, which are not
	// recorded, and holds no data of its own.
	TailSlot = MainnetSlot + 6000

	// TailBlockhash is the tail's blockhash: the SHA-256 of "chainquery
	// dev: the empty block after mainnet slot 110360000", in base58, which
	// no mainnet block has. The ingester records it in the cursor, and
	// checks it when it resumes.
	TailBlockhash = "VSbjbxZbnrQFEoum2BxeTbwLtbkaXUt2Ur5TDq1GoJy"
)

// What the recorded block holds, for examples that answer with data;
// TestExamples checks each against the block.
const (
	// ExampleSOLAccount is the block's leader, which ends it with
	// 1,521.283485447 SOL: its balance after the block's last vote, plus
	// the block's fees and its share of the rent (summed by hand from the
	// block).
	ExampleSOLAccount = "74theNPM1xGD5Pk54vV8hyBKF8Fqs1BgzTceGmcYVxiW"

	// ExampleOwner owns two token accounts whose balances change in the
	// block, USDC and COPE (no owner has more: 31 token accounts change in
	// the block, and 24 owners own them).
	ExampleOwner = "5Q544fKrFoe6tsEbD7S8EmxGTJYAKtTVhAW5Q5pge4j1"

	// ExampleTokenAccount is ExampleOwner's USDC account, which ends the
	// block with 538,847.272574 USDC.
	ExampleTokenAccount = "Dv95skm7AUr33x1p2Bu5EgvE3usB1TxgZoxjBe2rpfm6"
)

// ExampleAt is the first 10-minute snapshot after the recorded block, and
// before TailSlot: the time at which the examples see its balances.
var ExampleAt = time.Date(2021, 12, 6, 21, 20, 0, 0, time.UTC)

// Mainnet returns a node that holds the recorded mainnet block at
// MainnetSlot and an empty block at TailSlot, its head. It returns an error
// only if the embedded block cannot be read, which is a broken build.
func Mainnet() (*Node, error) {
	raw, err := MainnetBlock()
	if err != nil {
		return nil, err
	}
	n := NewNode()
	n.AddBlock(MainnetSlot, raw)
	n.AddBlock(TailSlot, json.RawMessage(fmt.Sprintf(`{"blockhash":%q,"parentSlot":%d,"blockTime":%d,"transactions":[],"rewards":[]}`,
		TailBlockhash, TailSlot-1, MainnetBlockTime+3600)))
	return n, nil
}

// MainnetBlock returns the getBlock result of the recorded block, gunzipped
// and unwrapped from its JSON-RPC response.
func MainnetBlock() (json.RawMessage, error) {
	zr, err := gzip.NewReader(bytes.NewReader(mainnetBlock))
	if err != nil {
		return nil, fmt.Errorf("solanareplay: the recorded block: %w", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("solanareplay: the recorded block: %w", err)
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(b, &resp); err != nil || len(resp.Result) == 0 {
		return nil, fmt.Errorf("solanareplay: the recorded block is not a getBlock response (%v)", err)
	}
	return resp.Result, nil
}

// TokenList returns the token list subset, in the Solana token-list JSON
// format, for the registry.
func TokenList() io.Reader { return bytes.NewReader(tokenList) }
