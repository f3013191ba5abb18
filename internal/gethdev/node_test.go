package gethdev_test

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/chainquery/chainquery/internal/gethdev"
	"github.com/chainquery/chainquery/internal/testenv"
	"github.com/chainquery/chainquery/jsonrpc"
)

func startNode(t *testing.T) (*gethdev.Node, *jsonrpc.Client) {
	t.Helper()
	n, err := gethdev.Start(137)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n, jsonrpc.NewClient(n.URL)
}

// TestTrafficIsTraced sends a round and checks that the node answers
// debug_traceBlockByNumber with the callTracer for it: the API that
// ethclient/simulated leaves out.
func TestTrafficIsTraced(t *testing.T) {
	ctx := context.Background()
	n, rpc := startNode(t)
	traffic, err := gethdev.Deploy(ctx, rpc, 137, func(context.Context) error { _, err := n.Seal(); return err })
	traffic.Sent = n.Settle
	if err != nil {
		t.Fatal(err)
	}
	r, err := traffic.Round(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Block != 3 || len(r.Hashes) != 6 {
		t.Fatalf("round in block %d with %d transactions, want block 3 with 6", r.Block, len(r.Hashes))
	}
	var traces []struct {
		TxHash string `json:"txHash"`
		Result struct {
			Type  string            `json:"type"`
			Calls []json.RawMessage `json:"calls"`
			Error string            `json:"error"`
		} `json:"result"`
	}
	if err := rpc.Call(ctx, &traces, "debug_traceBlockByNumber", "0x3", map[string]any{"tracer": "callTracer"}); err != nil {
		t.Fatal(err)
	}
	if len(traces) != 6 {
		t.Fatalf("%d traces, want 6", len(traces))
	}
	// nested: CREATE, CREATE2, CALL, reverted CALL, STATICCALL,
	// DELEGATECALL, CALL (with the SELFDESTRUCT under it).
	if got := len(traces[0].Result.Calls); got != 7 {
		t.Errorf("nested has %d calls, want 7", got)
	}
	if traces[1].Result.Error != "execution reverted" {
		t.Errorf("alwaysRevert: error %q", traces[1].Result.Error)
	}
	if traces[4].Result.Type != "CREATE" {
		t.Errorf("creation traced as %q", traces[4].Result.Type)
	}
}

// TestLoopbackOnly checks that every TCP and UDP socket the process holds
// once the node runs is bound to (and, if connected, talks to) a loopback
// address: no P2P listener, no discovery, no NAT probing.
func TestLoopbackOnly(t *testing.T) {
	// The sockets are read from Linux's /proc. Elsewhere the test cannot
	// run; CI runs Linux, where this skip never happens and a missing /proc
	// is a missing prerequisite like any other.
	if runtime.GOOS != "linux" {
		t.Skip("reads sockets from Linux's /proc; GOOS is", runtime.GOOS)
	}
	_, err := os.Stat("/proc/self/net/tcp")
	testenv.Require(t, err == nil, "needs /proc/self/net/tcp (%v): mount /proc", err)
	_, rpc := startNode(t)
	// One call, so that a client connection exists as well.
	if err := rpc.Call(context.Background(), new(json.RawMessage), "eth_blockNumber"); err != nil {
		t.Fatal(err)
	}
	mine := socketInodes(t)
	found := 0
	for _, table := range []string{"tcp", "tcp6", "udp", "udp6"} {
		f, err := os.Open("/proc/self/net/" + table)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // the header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || !mine[fields[9]] {
				continue
			}
			found++
			local, remote := procAddr(t, fields[1]), procAddr(t, fields[2])
			if !local.IsLoopback() || !(remote.IsLoopback() || remote.IsUnspecified()) {
				t.Errorf("%s socket %s -> %s is not on loopback", table, local, remote)
			}
		}
		f.Close()
	}
	if found == 0 {
		t.Fatal("no socket of this process found: the check sees nothing")
	}
}

// socketInodes returns the inodes of the sockets among the process's file
// descriptors.
func socketInodes(t *testing.T) map[string]bool {
	fds, err := filepath.Glob("/proc/self/fd/*")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(fd)
		if err == nil && strings.HasPrefix(link, "socket:[") {
			out[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	return out
}

// procAddr parses an address of /proc/net/{tcp,udp}[6]: hex words in host
// (little-endian) order, then the port.
func procAddr(t *testing.T, s string) net.IP {
	ipHex, _, _ := strings.Cut(s, ":")
	b, err := hex.DecodeString(ipHex)
	if err != nil || len(b)%4 != 0 {
		t.Fatalf("address %q", s)
	}
	for i := 0; i < len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	return net.IP(b)
}
