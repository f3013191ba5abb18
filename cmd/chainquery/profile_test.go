package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeProfile: serve's hidden --cpuprofile and --memprofile (as
// ingest evm's) write their profiles when it stops, and stay out of -h.
func TestServeProfile(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof")
	r := start(t, nil, "serve", "--db", "sqlite:"+filepath.Join(dir, "x.db"), "--listen", "127.0.0.1:0",
		"--cpuprofile", cpu, "--memprofile="+mem)
	r.stop(t)
	for _, f := range []string{cpu, mem} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v, %d bytes", f, err, st.Size())
		}
	}
	help := execute(t, nil, "serve", "-h")
	if out := help.stdout + help.stderr; strings.Contains(out, "profile") {
		t.Errorf("serve -h shows the profile flags:\n%s", out)
	}
}
