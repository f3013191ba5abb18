package solana_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/chainquery/chainquery"
	"github.com/chainquery/chainquery/solana"
	"github.com/chainquery/chainquery/solana/solanatest"
)

// testdata returns the path of a file of the shared Solana fixtures, read in
// place.
func testdata(t testing.TB, parts ...string) string {
	t.Helper()
	return solanatest.Testdata(t, parts...)
}

func key(t testing.TB, s string) chainquery.PublicKey {
	t.Helper()
	k, err := chainquery.ParsePublicKey("key", s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestMetadata decodes the two recorded metadata accounts and checks the
// program address of their mints against the accounts' addresses.
func TestMetadata(t *testing.T) {
	for _, tc := range []struct {
		pda, mint, authority, name, symbol, uriSuffix string
		bump                                          uint8
	}{
		{"FyZ5UEVzriuD1hHjtakuwHWbQMNL5EUseuQyC2ohBD6x", "DCVgUBbCV8gMhaiHcsdtm68dfUW5nqCJuswRy3yC7aoF",
			"Bxw6mCzh4vb3bwL7K29AHZxJHzQsgNHYVMq2Ru1GZHMC", "Dinodawgs 3D #2032", "DDK",
			"https://bafybeigxjaui4sxttbozfovuvaubh7ti3dgoioxl6k5s5qseyq2s7ukvdi.ipfs.nftstorage.link/2032.json", 255},
		// An empty name: 32 NUL bytes.
		{"DoYGxH1y3oSNuDbvAwv5ShyNm3QAamd5SQACKvWUhHzR", "AZvuQEuVjKfQ97QmB6DCXXuSuUfPDagaMEsue6ABzQLn",
			"BNxtGx5mGZ4ZQA4b4RLoU47Kv4LmhxFsnk6LEJBFmUMR", "", "AKLN",
			"https://testlaunchmynft.mypinata.cloud/ipfs/QmQqM1vBanFbkDWu6sNdK8QE77G2y8gBsWGAbZGTYDKjqF/379.json", 251},
	} {
		t.Run(tc.pda[:8], func(t *testing.T) {
			raw, err := os.ReadFile(testdata(t, "metaplex", "getMultipleAccounts_metadata_"+tc.pda+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var resp []struct {
				Result struct {
					Value []struct {
						Data  []string `json:"data"`
						Owner string   `json:"owner"`
					} `json:"value"`
				} `json:"result"`
			}
			if err := json.Unmarshal(raw, &resp); err != nil {
				t.Fatal(err)
			}
			acct := resp[0].Result.Value[0]
			if acct.Owner != solana.MetadataProgram.String() {
				t.Fatalf("owner %s", acct.Owner)
			}
			data, err := base64.StdEncoding.DecodeString(acct.Data[0])
			if err != nil {
				t.Fatal(err)
			}
			m, err := solana.DecodeMetadata(data)
			if err != nil {
				t.Fatal(err)
			}
			if m.Mint.String() != tc.mint || m.UpdateAuthority.String() != tc.authority ||
				m.Name != tc.name || m.Symbol != tc.symbol || m.URI != tc.uriSuffix {
				t.Fatalf("decoded %+v", m)
			}
			pda, bump, err := solana.MetadataAddress(key(t, tc.mint))
			if err != nil || pda.String() != tc.pda || bump != tc.bump {
				t.Fatalf("MetadataAddress = %s bump %d, %v; want %s bump %d", pda, bump, err, tc.pda, tc.bump)
			}
		})
	}
	t.Run("ErrTruncated", func(t *testing.T) {
		data := make([]byte, 70)
		data[0] = 4
		data[65] = 200 // a name longer than the account
		if _, err := solana.DecodeMetadata(data); err == nil {
			t.Fatal("no error")
		}
	})
}

// TestOnCurve checks the curve test on keys known to be on it (wallets,
// which have private keys) and off it (program addresses).
func TestOnCurve(t *testing.T) {
	for _, s := range []string{"Bxw6mCzh4vb3bwL7K29AHZxJHzQsgNHYVMq2Ru1GZHMC", "BNxtGx5mGZ4ZQA4b4RLoU47Kv4LmhxFsnk6LEJBFmUMR"} {
		if !solana.OnCurve(key(t, s)) {
			t.Errorf("%s: want on the curve", s)
		}
	}
	for _, s := range []string{"FyZ5UEVzriuD1hHjtakuwHWbQMNL5EUseuQyC2ohBD6x", "DoYGxH1y3oSNuDbvAwv5ShyNm3QAamd5SQACKvWUhHzR"} {
		if solana.OnCurve(key(t, s)) {
			t.Errorf("%s: want off the curve", s)
		}
	}
}

func TestReadTokenList(t *testing.T) {
	f, err := os.Open(testdata(t, "tokenlist", "solana.tokenlist.subset.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tokens, err := solana.ReadTokenList(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(tokens) == 0 || len(tokens) > 246 {
		t.Fatalf("%d mainnet tokens", len(tokens))
	}
	byMint := map[string]*chainquery.Token{}
	for _, tk := range tokens {
		byMint[tk.Mint.String()] = tk
	}
	if tk := byMint["3SghkPdBSrpF9bzdAy5LwR4nGgFbqNcC6ZSq8vtZdj91"]; tk == nil || tk.Name != "EveryOne Coin" || tk.Symbol != "EV1" || tk.Decimals != 9 {
		t.Fatalf("EV1: %+v", tk)
	}
	_, err = solana.ReadTokenList(strings.NewReader(`{"tokens":[{"chainId":101,"address":"nope","name":"x"}]}`))
	if err == nil {
		t.Fatal("bad address accepted")
	}
}
