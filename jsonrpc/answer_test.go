package jsonrpc

import (
	"testing"
)

// FuzzMatchAnswers feeds arbitrary node answers to the matching of answers
// to calls: it never panics, and every call ends with a result or an error.
func FuzzMatchAnswers(f *testing.F) {
	for _, s := range []string{
		`[]`,
		`{}`,
		`[{"jsonrpc":"2.0","id":1,"result":"0x1"},{"jsonrpc":"2.0","id":2,"result":null}]`,
		`[{"jsonrpc":"2.0","id":2,"result":"0x1"},{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"x"}}]`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch not supported"}}`,
		`[{"id":"1","result":1},{"id":1,"result":1},{"id":1,"result":1}]`,
		`[{"id":null,"error":{"code":1,"message":"m"}}]`,
		`{"id":1,"result":"0x1"}`,
		`<html></html>`,
		` `,
	} {
		f.Add(s, uint8(1))
		f.Add(s, uint8(2))
	}
	f.Fuzz(func(t *testing.T, body string, n uint8) {
		n = n%3 + 1
		reqs := make([]*Request, n)
		ids := make([]uint64, n)
		for i := range reqs {
			reqs[i] = &Request{Method: "m"}
			ids[i] = uint64(i + 1)
		}
		if err := matchAnswers(reqs, ids, []byte(body)); err != nil {
			return
		}
		for i, r := range reqs {
			if (r.Result == nil) == (r.Err == nil) {
				t.Fatalf("%q: call %d has result %q and error %v", body, i, r.Result, r.Err)
			}
		}
	})
}
