package jsonrpc

import (
	"encoding/json"
	"fmt"
	"testing"
)

// FuzzParseAnswers checks the hand-written envelope parser against
// encoding/json: on any input that encoding/json reads as responses, it
// gives the same ids, results and errors, and it never panics.
func FuzzParseAnswers(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":"0x2a"}`,
		`[{"jsonrpc":"2.0","id":2,"result":{"a":"}]\"[{","b":[1,2,{"c":null}]}},{"id":"3","error":{"code":-32000,"message":"x"}}]`,
		` [ ] `,
		`[{"id":1,"result":null}]`,
		`{"id":1,"result":[{"x":"\\"}]}`,
		`{"jsonrpc":"2.0","id":1,"resu`,
		`<html>`,
		`[{"id":1,"result":true},`,
		`{"id":1,"result":-1.5e3}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseAnswers([]byte(s), false)
		var one rpcResponse
		var many []rpcResponse
		var want []rpcResponse
		if json.Unmarshal([]byte(s), &many) == nil {
			want = many
		} else if json.Unmarshal([]byte(s), &one) == nil && s != "null" && len(s) > 0 {
			want = []rpcResponse{one}
		} else {
			return // encoding/json refuses it; the parser may too, or leave it to the result decoder
		}
		if err != nil {
			if len(want) > 0 && fmt.Sprint(want) != "[]" {
				t.Fatalf("parser refused %q, encoding/json read %d responses: %v", s, len(want), err)
			}
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d responses, encoding/json %d", s, len(got), len(want))
		}
		for i := range got {
			if norm(got[i].ID) != norm(want[i].ID) || norm(got[i].Result) != norm(want[i].Result) ||
				(got[i].Error == nil) != (want[i].Error == nil) ||
				got[i].Error != nil && (got[i].Error.Code != want[i].Error.Code || got[i].Error.Message != want[i].Error.Message) {
				t.Fatalf("%q: response %d: %+v, encoding/json %+v", s, i, got[i], want[i])
			}
		}
	})
}

// FuzzLooseAnswers checks what a loosely bounded result promises
// (parseAnswers with loose): whenever it is one JSON value, as a decoder
// takes it, it is the result that reading every member gives, with the
// same id; and an answer not bounded loosely is read as without loose.
func FuzzLooseAnswers(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":"0x2a"}`,
		`{"jsonrpc":"2.0","id":1,"result":[1,{"a":"}"}] }` + "\n",
		`{"id":1,"result":[1],"x":[2]}`,
		`{"id":1,"result":null,"error":{"code":1,"message":"m"}}`,
		`{"id":1,"result":1,"result":2}`,
		`{"result":3,"id":1}`,
		`{"id":1,"result":"a"}, "b":"c"}`,
		`{"id":1,"result":}`,
		`{"result":3,"id":1,"error":{"code":1,"message":"m"}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		loose, errL := parseAnswers([]byte(s), true)
		strict, errS := parseAnswers([]byte(s), false)
		if errL != nil || len(loose) != 1 {
			return
		}
		if !loose[0].loose {
			if errS != nil || len(strict) != 1 || answerText(loose[0]) != answerText(strict[0]) {
				t.Fatalf("%q: not loose, yet %v (%v) against %v (%v)", s, loose, errL, strict, errS)
			}
			return
		}
		if !json.Valid(loose[0].Result) {
			return // the decoder refuses it and asks for the exact answer
		}
		if errS != nil || len(strict) != 1 || string(strict[0].Result) != string(loose[0].Result) || string(strict[0].ID) != string(loose[0].ID) {
			t.Fatalf("%q: loose result %s (id %s), exact %v (%v)", s, loose[0].Result, loose[0].ID, strict, errS)
		}
	})
}

// answerText spells a response out, its error's fields rather than its
// address.
func answerText(r rpcResponse) string {
	e := "<nil>"
	if r.Error != nil {
		e = fmt.Sprintf("%d %q %s", r.Error.Code, r.Error.Message, r.Error.Data)
	}
	return fmt.Sprintf("id %s result %s error %s loose %v", r.ID, r.Result, e, r.loose)
}

// norm compacts a JSON value so that equal values compare equal.
func norm(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// skipStringBytewise is skipString as it was, byte by byte: FuzzSkipString
// holds the IndexByte version to it.
func skipStringBytewise(data []byte, i int) (int, bool) {
	i++
	for i < len(data) {
		switch data[i] {
		case '\\':
			i += 2
			continue
		case '"':
			return i + 1, true
		}
		i++
	}
	return i, false
}

func FuzzSkipString(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b"`, `"a\\"`, `"a\\\"b"x`, `"\`, `"abc`, `"\\\\"`, `"x\"`, `""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) == 0 || s[0] != '"' {
			return
		}
		want, ok := skipStringBytewise([]byte(s), 0)
		p := envelopeParser{data: []byte(s)}
		err := p.skipString()
		if ok != (err == nil) || ok && p.i != want {
			t.Fatalf("%q: at %d, err %v; bytewise at %d, ok %v", s, p.i, err, want, ok)
		}
	})
}
