package evm

import (
	"strings"
	"testing"
)

// FuzzLowerKind holds lowerKind, which callTypeOf uses instead of
// strings.ToLower to spare an allocation, to strings.ToLower.
func FuzzLowerKind(f *testing.F) {
	for _, s := range []string{"", "CALL", "call", "DelegateCall", "STATICCALL", "CREATE2", "SELFDESTRUCT", "suicide",
		"CALLCODE", "INVALID", "ÇALL", "\u212Aill", "ſelfdestruct", "İ", "A_VERY_LONG_CALL_KIND_NAME", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf [16]byte
		if got, want := string(lowerKind(s, buf[:])), strings.ToLower(s); got != want {
			t.Fatalf("lowerKind(%q) = %q, want %q", s, got, want)
		}
	})
}
