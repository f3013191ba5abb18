package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/internal/devchain"
	"github.com/chainquery/chainquery/internal/solanareplay"
)

// round is what the examples point at: a block of the dev chain and its
// transaction with the most logs.
type round struct {
	block uint64
	tx    string
}

// firstRound sends the first round of transactions before anything else
// starts, so that the printed examples name a real block and transaction.
func firstRound(ctx context.Context, t *devchain.Traffic) (round, error) {
	hashes, err := t.Round(ctx)
	if err != nil {
		return round{}, fmt.Errorf("send the first transactions: %w", err)
	}
	raw, err := t.WaitReceipt(ctx, hashes[0])
	if err != nil {
		return round{}, err
	}
	var first struct {
		BlockNumber string `json:"blockNumber"`
	}
	if err := json.Unmarshal(raw, &first); err != nil {
		return round{}, fmt.Errorf("receipt of %s: %w", hashes[0], err)
	}
	block, err := strconv.ParseUint(strings.TrimPrefix(first.BlockNumber, "0x"), 16, 64)
	if err != nil {
		return round{}, fmt.Errorf("receipt of %s: block number %q", hashes[0], first.BlockNumber)
	}
	var receipts []struct {
		TransactionHash string            `json:"transactionHash"`
		Logs            []json.RawMessage `json:"logs"`
	}
	if err := t.RPC.Call(ctx, &receipts, "eth_getBlockReceipts", first.BlockNumber); err != nil {
		return round{}, fmt.Errorf("eth_getBlockReceipts %d: %w", block, err)
	}
	r := round{block: block, tx: hashes[0]}
	most := -1
	for _, rc := range receipts {
		if len(rc.Logs) > most {
			r.tx, most = rc.TransactionHash, len(rc.Logs)
		}
	}
	return r, nil
}

// devKey creates the API key "dev" for every endpoint. A key is shown only
// when it is made, so one kept from an earlier run (--keep) is replaced.
func devKey(ctx context.Context, store chainquery.Store) (string, error) {
	if err := store.RevokeAPIKey(ctx, "dev"); err != nil && chainquery.ErrorCode(err) != chainquery.ENOTFOUND {
		return "", fmt.Errorf("revoke the old dev key: %w", err)
	}
	key, hash := chainquery.NewAPIKey()
	k := &chainquery.APIKey{Name: "dev", Hash: hash, Endpoints: chainquery.Endpoints, CreatedAt: time.Now().UTC()}
	if err := store.CreateAPIKey(ctx, k); err != nil {
		return "", fmt.Errorf("create the dev API key: %w", err)
	}
	return key, nil
}

// waitIndexed waits until the follower has stored block n, so that every
// printed example answers with data from the moment it is printed.
func waitIndexed(ctx context.Context, store chainquery.Store, n uint64) error {
	deadline := time.Now().Add(time.Minute)
	for {
		latest, err := store.LatestBlock(ctx, chainquery.Polygon)
		if err == nil && latest >= n {
			return nil
		} else if err != nil && chainquery.ErrorCode(err) != chainquery.ENOTFOUND {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the follower has not stored block %d after a minute", n)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

var welcome = template.Must(template.New("welcome").Parse(`
chainquery dev is running:
  anvil (chain id 137)  {{.Node}}, a round of transactions every {{.Interval}}
  test contracts        Driver {{.Driver}}, Lib {{.Lib}}{{if .Keep}} (the last run's, when kept){{end}}
  indexed as polygon    into {{.DB}}
  solana                mainnet block {{.Slot}} of {{.SlotTime}}, recorded, replayed into the same database
  the API               {{.Base}}  (OpenAPI: {{.Base}}/openapi.json)
  docs, try it out      {{.Base}}/docs  (paste the key below into Authorize)
  metrics               {{.Base}}/metrics  (Prometheus, no key)
Ctrl-C stops everything.

Pages: limit is 1 to 50 (default 10), offset from 0; Filter Traces takes at most 100 blocks
or a datetime range, and at most 10 from_address and 10 to_address.

API key "dev" (every endpoint; shown only now{{if .Keep}}; a new one: the last run's no longer works{{end}}):
{{.Key}}

Try it: each command below runs on its own.

# Get Latest Block: the highest block indexed so far
curl -s '{{.Base}}/api/v1/customer/polygon/blocks/latest' -H 'apikey: {{.Key}}'

# Get Block {{.Block}} with its transactions
curl -s '{{.Base}}/api/v1/customer/polygon/block?block_number={{.Block}}&full_transactions=true' -H 'apikey: {{.Key}}'

# Get Block Receipts of block {{.Block}}
curl -s '{{.Base}}/api/v1/customer/polygon/blocks/receipts?block_number={{.Block}}&limit=10' -H 'apikey: {{.Key}}'

# Get Transaction Logs of a transaction in block {{.Block}}
curl -s '{{.Base}}/api/v1/customer/polygon/transactions/{{.Tx}}/logs?block_number={{.Block}}&limit=10' -H 'apikey: {{.Key}}'

# Get Transaction: the same transaction by its hash alone, then its receipt and its call tree
curl -s '{{.Base}}/api/v1/customer/polygon/transactions/{{.Tx}}' -H 'apikey: {{.Key}}'
curl -s '{{.Base}}/api/v1/customer/polygon/transactions/{{.Tx}}/receipt' -H 'apikey: {{.Key}}'
curl -s '{{.Base}}/api/v1/customer/polygon/transactions/{{.Tx}}/traces?limit=10' -H 'apikey: {{.Key}}'

# Get Block Logs: every log of block {{.Block}}
curl -s '{{.Base}}/api/v1/customer/polygon/blocks/logs?block_number={{.Block}}&limit=10' -H 'apikey: {{.Key}}'

# Filter Logs: every log of block {{.Block}} (add "address" and "topic0".."topic3" to narrow it)
curl -s -X POST '{{.Base}}/api/v1/customer/polygon/logs/filter?limit=10' -H 'apikey: {{.Key}}' -H 'Content-Type: application/json' -d '{"from_block": {{.Block}}, "to_block": {{.Block}}}'

# Filter Traces from an hour ago to an hour ahead (a datetime range needs a zone)
curl -s -X POST '{{.Base}}/api/v1/customer/polygon/traces/filter?limit=10&offset=0' -H 'apikey: {{.Key}}' -H 'Content-Type: application/json' -d '{"from_datetime": "{{.From}}", "to_datetime": "{{.To}}"}'

# Export Logs: every log up to block {{.Block}}, one a line (NDJSON), a {"cursor": ...} line after each chunk, {"cursor": null} last
curl -s -X POST '{{.Base}}/api/v1/customer/polygon/logs/export' -H 'apikey: {{.Key}}' -H 'Content-Type: application/json' -d '{"from_block": 0, "to_block": {{.Block}}}'

# Export Traces of the same two hours; a cut export resumes with the same body and "cursor": the last cursor received
curl -s -X POST '{{.Base}}/api/v1/customer/polygon/traces/export' -H 'apikey: {{.Key}}' -H 'Content-Type: application/json' -d '{"from_datetime": "{{.From}}", "to_datetime": "{{.To}}"}'

# SOL Balance by Account (solana): the SOL of the leader of block {{.Slot}}, at the first snapshot after it
curl -s '{{.Base}}/api/v1/customer/solana/sol-balances/account/{{.SOLAccount}}?datetime_filter={{.At}}' -H 'apikey: {{.Key}}'

# Token Balances by Owner (solana): every token account of a wallet, at the same snapshot
curl -s '{{.Base}}/api/v1/customer/solana/token-balances/owner/{{.Owner}}?datetime_filter={{.At}}&include_metadata=true' -H 'apikey: {{.Key}}'

# Token Balance by Account (solana): one of them, its USDC account
curl -s '{{.Base}}/api/v1/customer/solana/token-balances/token-account/{{.Account}}?datetime_filter={{.At}}&include_metadata=true' -H 'apikey: {{.Key}}'

`))

// printWelcome prints the key and a ready-to-paste curl command for each
// endpoint. The key and URL are written into every command rather
// than into shell variables, so that each one works pasted alone, in any
// shell.
func (c *devCmd) printWelcome(m *Main, node *devchain.Anvil, traffic *devchain.Traffic, base, key string, r round) {
	now := time.Now().UTC()
	welcome.Execute(m.Stdout, map[string]any{
		"Node":       node.URL,
		"Driver":     traffic.Driver,
		"Lib":        traffic.Lib,
		"Keep":       c.keep,
		"Interval":   c.interval,
		"DB":         c.db.String(),
		"Base":       base,
		"Key":        key,
		"Block":      r.block,
		"Tx":         r.tx,
		"From":       now.Add(-time.Hour).Format(time.RFC3339),
		"To":         now.Add(time.Hour).Format(time.RFC3339),
		"Slot":       solanareplay.MainnetSlot,
		"SlotTime":   time.Unix(solanareplay.MainnetBlockTime, 0).UTC().Format(time.RFC3339),
		"SOLAccount": solanareplay.ExampleSOLAccount,
		"Owner":      solanareplay.ExampleOwner,
		"Account":    solanareplay.ExampleTokenAccount,
		"At":         solanareplay.ExampleAt.Format(time.RFC3339),
	})
}
