// Package storetest holds the fixture data set and the conformance suite that
// every store must pass. Tests of other packages load the same fixture
// through a store's write side, so the whole project tests one world.
package storetest

import (
	"math/big"
	"time"

	"github.com/chainquery/chainquery"
)

// Addr returns a deterministic test address whose last byte is n and whose
// first byte is 0xAB, so that hex case matters in requests.
func Addr(n byte) chainquery.Address {
	var a chainquery.Address
	a[0], a[19] = 0xab, n
	return a
}

// AddrP returns a pointer to Addr(n).
func AddrP(n byte) *chainquery.Address { a := Addr(n); return &a }

// H returns a deterministic test hash whose last byte is n and first byte tag.
func H(tag, n byte) chainquery.Hash {
	var h chainquery.Hash
	h[0], h[1], h[31] = tag, 0xcd, n
	return h
}

// BlockHash is the hash of the fixture block at number; each block's parent
// hash is BlockHash(number-1).
func BlockHash(number uint64) chainquery.Hash { return H(TagBlock, byte(number)) }

// Tags of H, so that hashes of different kinds never collide.
const (
	TagBlock byte = 0xb0
	TagTx    byte = 0x70
	TagTopic byte = 0xe0
	TagRoot  byte = 0x50
)

// Named addresses of the fixture.
var (
	EOA1     = Addr(0x01) // sends most transactions
	EOA2     = Addr(0x02)
	Router   = Addr(0x10) // called by tx 0, fans out to eleven subcalls
	Impl     = Addr(0x11) // delegatecall target
	Oracle   = Addr(0x12) // staticcall target
	Token    = Addr(0x13) // emits the logs
	Failing  = Addr(0x14) // reverts
	Created  = Addr(0x20) // made by tx 2's CREATE
	Created2 = Addr(0x21) // made by the CREATE2 inside tx 2
	Doomed   = Addr(0x30) // selfdestructs in tx 3
)

// Fixture block numbers and times. Polygon blocks are stamped in 2025 so that
// the default trace history start (2025-01-01) admits them.
const (
	PolygonBlock      uint64 = 68000000 // five transactions, every trace kind
	PolygonEmptyBlock uint64 = 68000001 // no transactions
	PolygonLaterBlock uint64 = 68000002 // one transaction from EOA2 to Router
	EthereumBlock     uint64 = 18000000 // one transaction with one log
)

// Timestamps of the fixture blocks (2025-03-01T00:00:00Z and two seconds apart).
var (
	PolygonTime      = time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC).Unix()
	PolygonEmptyTime = PolygonTime + 2
	PolygonLaterTime = PolygonTime + 4
	EthereumTime     = time.Date(2023, 8, 26, 17, 49, 59, 0, time.UTC).Unix()
)

// Transaction hashes of the fixture.
var (
	TxNested   = H(TagTx, 0) // nested traces, a reverted inner call, logs with 0-4 topics
	TxReverted = H(TagTx, 1) // reverted transaction
	TxCreate   = H(TagTx, 2) // contract creation with a CREATE2 inside
	TxSuicide  = H(TagTx, 3) // call that selfdestructs a contract
	TxTransfer = H(TagTx, 4) // plain value transfer, no logs, one trace
	TxLater    = H(TagTx, 5) // in PolygonLaterBlock
	TxEthereum = H(TagTx, 6) // on ethereum
)

func wei(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return v
}

// NestedSubcalls is how many direct subcalls tx 0's call into Impl makes: eleven,
// so that "0.10" exists and must sort after "0.2".
const NestedSubcalls = 11

// Blocks returns the EVM fixture: fresh values on every call, so that a test
// may change them.
func Blocks() map[chainquery.Chain][]*chainquery.BlockData {
	return map[chainquery.Chain][]*chainquery.BlockData{
		chainquery.Polygon:  {polygonBlock(), polygonEmptyBlock(), polygonLaterBlock()},
		chainquery.Ethereum: {ethereumBlock()},
	}
}

func header(chain chainquery.Chain, number uint64, ts int64, txs int) *chainquery.Block {
	return &chainquery.Block{
		Chain:            chain,
		Number:           number,
		Hash:             BlockHash(number),
		ParentHash:       BlockHash(number - 1),
		Timestamp:        ts,
		LogsBloom:        make([]byte, 256),
		TransactionsRoot: H(TagRoot, 1),
		StateRoot:        H(TagRoot, 2),
		ReceiptsRoot:     H(TagRoot, 3),
		Miner:            Addr(0xee),
		ExtraData:        []byte{0xd8, 0x83, 0x01},
		HasExtraData:     true,
		Size:             1234,
		GasLimit:         30_000_000,
		GasUsed:          uint64(21000 * txs),
		TransactionCount: txs,
		BaseFeePerGas:    big.NewInt(30_000_000_000),
	}
}

func tx(number uint64, index int, hash chainquery.Hash, from chainquery.Address, to *chainquery.Address) *chainquery.Transaction {
	return &chainquery.Transaction{
		BlockNumber:          number,
		Hash:                 hash,
		Index:                index,
		From:                 from,
		To:                   to,
		Value:                big.NewInt(0),
		GasLimit:             500_000,
		GasPrice:             big.NewInt(31_000_000_000),
		EffectiveGasPrice:    big.NewInt(31_000_000_000),
		MaxFeePerGas:         big.NewInt(40_000_000_000),
		MaxPriorityFeePerGas: big.NewInt(1_000_000_000),
		GasUsed:              21000,
		CumulativeGasUsed:    uint64(21000 * (index + 1)),
		Nonce:                uint64(index),
		Input:                []byte{},
		Type:                 2,
		Status:               true,
	}
}

func call(number uint64, txIndex int, addr []int, typ, callType string, from chainquery.Address, to *chainquery.Address, gas, used uint64, input []byte, subtraces int) *chainquery.Trace {
	return &chainquery.Trace{
		BlockNumber:      number,
		TransactionIndex: txIndex,
		TraceAddress:     addr,
		Type:             typ,
		CallType:         callType,
		From:             from,
		To:               to,
		Gas:              gas,
		GasUsed:          used,
		Value:            big.NewInt(0),
		Subtraces:        subtraces,
		Input:            input,
		Output:           []byte{},
	}
}

var selector = []byte{0xa9, 0x05, 0x9c, 0xbb} // transfer(address,uint256)

func polygonBlock() *chainquery.BlockData {
	n := PolygonBlock
	b := header(chainquery.Polygon, n, PolygonTime, 5)

	// tx 0: EOA1 -> Router, which delegatecalls Impl; Impl makes eleven
	// subcalls (0.0 .. 0.10): a staticcall to Oracle, a reverted call to
	// Failing, and nine calls to Token that emit logs.
	t0 := tx(n, 0, TxNested, EOA1, &Router)
	t0.Input = append(append([]byte{}, selector...), make([]byte, 64)...)
	t0.GasUsed = 180_000
	t0.CumulativeGasUsed = 180_000
	t0.LogCount = 5
	traces := []*chainquery.Trace{
		call(n, 0, nil, chainquery.TraceCall, chainquery.CallTypeCall, EOA1, &Router, 478_000, 158_000, t0.Input, 1),
		call(n, 0, []int{0}, chainquery.TraceCall, chainquery.CallTypeDelegateCall, Router, &Impl, 460_000, 150_000, []byte{0x01, 0x02}, NestedSubcalls),
	}
	traces[0].Output = []byte{0x00, 0x01}
	for i := 0; i < NestedSubcalls; i++ {
		var c *chainquery.Trace
		switch i {
		case 0:
			c = call(n, 0, []int{0, i}, chainquery.TraceCall, chainquery.CallTypeStaticCall, Router, &Oracle, 10_000, 2_400, []byte{0xfe, 0xaf, 0x96, 0x8c}, 0)
			c.Output = make([]byte, 32)
		case 1:
			c = call(n, 0, []int{0, i}, chainquery.TraceCall, chainquery.CallTypeCall, Router, &Failing, 20_000, 0, []byte{0xde, 0xad}, 0)
			c.Error = "execution reverted"
		default:
			c = call(n, 0, []int{0, i}, chainquery.TraceCall, chainquery.CallTypeCall, Router, &Token, 30_000, 12_000+uint64(i), selector, 0)
			c.Value = big.NewInt(int64(i))
		}
		traces = append(traces, c)
	}

	// Logs with 0, 1, 2, 3 and 4 topics, all from Token.
	var logs []*chainquery.Log
	for i := 0; i < 5; i++ {
		l := &chainquery.Log{BlockNumber: n, TransactionIndex: 0, LogIndex: i, Address: Token, Data: []byte{byte(i), 0xff}}
		for j := 0; j < i; j++ {
			l.Topics = append(l.Topics, H(TagTopic, byte(10*i+j)))
		}
		logs = append(logs, l)
	}

	// tx 1: a reverted transaction; its one subcall reverted too.
	t1 := tx(n, 1, TxReverted, EOA2, &Failing)
	t1.Status = false
	t1.Input = []byte{0xde, 0xad, 0xbe, 0xef, 0x01}
	t1.CumulativeGasUsed = t0.CumulativeGasUsed + t1.GasUsed
	top1 := call(n, 1, nil, chainquery.TraceCall, chainquery.CallTypeCall, EOA2, &Failing, 100_000, 23_000, t1.Input, 1)
	top1.Error = "execution reverted"
	top1.Output = []byte{0x08, 0xc3, 0x79, 0xa0}
	in1 := call(n, 1, []int{0}, chainquery.TraceCall, chainquery.CallTypeCall, Failing, &Token, 50_000, 0, selector, 0)
	in1.Error = "out of gas"

	// tx 2: a contract creation whose constructor CREATE2s another contract.
	t2 := tx(n, 2, TxCreate, EOA1, nil)
	t2.Input = []byte{0x60, 0x80, 0x60, 0x40, 0x52}
	t2.ContractAddress = &Created
	t2.Type = 0
	t2.MaxFeePerGas, t2.MaxPriorityFeePerGas = nil, nil
	t2.Nonce = 7
	t2.CumulativeGasUsed = t1.CumulativeGasUsed + t2.GasUsed
	top2 := call(n, 2, nil, chainquery.TraceCreate, chainquery.CallTypeCreate, EOA1, &Created, 300_000, 200_000, t2.Input, 1)
	top2.Output = []byte{0x60, 0x80}
	in2 := call(n, 2, []int{0}, chainquery.TraceCreate, chainquery.CallTypeCreate, Created, &Created2, 100_000, 50_000, []byte{0x60, 0x01}, 0)
	in2.Output = []byte{0x60, 0x02}
	in2.Value = wei("1000000000000000000")

	// tx 3: a call that makes Doomed selfdestruct to EOA2.
	t3 := tx(n, 3, TxSuicide, EOA1, &Doomed)
	t3.Input = []byte{0x41, 0xc0, 0xe1, 0xb5}
	t3.CumulativeGasUsed = t2.CumulativeGasUsed + t3.GasUsed
	top3 := call(n, 3, nil, chainquery.TraceCall, chainquery.CallTypeCall, EOA1, &Doomed, 50_000, 30_000, t3.Input, 1)
	s3 := call(n, 3, []int{0}, chainquery.TraceSuicide, chainquery.CallTypeCall, Doomed, &EOA2, 0, 0, []byte{}, 0)
	s3.Value = wei("123456789012345678901234567890") // larger than 64 bits

	// tx 4: a plain transfer with a large value.
	t4 := tx(n, 4, TxTransfer, EOA2, &EOA1)
	t4.Value = wei("25000000000000000000")
	t4.Type = 0
	t4.MaxFeePerGas, t4.MaxPriorityFeePerGas = nil, nil
	t4.CumulativeGasUsed = t3.CumulativeGasUsed + t4.GasUsed
	top4 := call(n, 4, nil, chainquery.TraceCall, chainquery.CallTypeCall, EOA2, &EOA1, 0, 0, []byte{}, 0)
	top4.Value = t4.Value

	// Shuffle the trace order a node would not give, so that stores must
	// order rows themselves.
	traces = append(traces, s3, top3, in2, top2, in1, top1, top4)
	return &chainquery.BlockData{
		Block:        b,
		Transactions: []*chainquery.Transaction{t0, t1, t2, t3, t4},
		Logs:         logs,
		Traces:       traces,
	}
}

// PolygonBlockTraces is the number of traces in PolygonBlock.
const PolygonBlockTraces = 2 + NestedSubcalls + 2 + 2 + 2 + 1

func polygonEmptyBlock() *chainquery.BlockData {
	b := header(chainquery.Polygon, PolygonEmptyBlock, PolygonEmptyTime, 0)
	b.BaseFeePerGas = nil
	b.HasExtraData, b.ExtraData = false, nil
	b.LogsBloom = nil
	return &chainquery.BlockData{Block: b}
}

func polygonLaterBlock() *chainquery.BlockData {
	n := PolygonLaterBlock
	b := header(chainquery.Polygon, n, PolygonLaterTime, 1)
	t := tx(n, 0, TxLater, EOA2, &Router)
	t.Input = selector
	return &chainquery.BlockData{
		Block:        b,
		Transactions: []*chainquery.Transaction{t},
		Traces: []*chainquery.Trace{
			call(n, 0, nil, chainquery.TraceCall, chainquery.CallTypeCall, EOA2, &Router, 40_000, 21_000, selector, 0),
		},
	}
}

func ethereumBlock() *chainquery.BlockData {
	n := EthereumBlock
	b := header(chainquery.Ethereum, n, EthereumTime, 1)
	t := tx(n, 0, TxEthereum, EOA1, &Token)
	t.LogCount = 1
	return &chainquery.BlockData{
		Block:        b,
		Transactions: []*chainquery.Transaction{t},
		Logs: []*chainquery.Log{{
			BlockNumber: n, TransactionIndex: 0, LogIndex: 0, Address: Token,
			Topics: []chainquery.Hash{H(TagTopic, 99)}, Data: []byte{},
		}},
	}
}
