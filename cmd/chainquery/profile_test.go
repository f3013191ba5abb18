package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeProfile: serve's hidden --cpuprofile, --memprofile and --trace
// (as ingest evm's) write their profiles when it stops, and stay out of -h.
func TestServeProfile(t *testing.T) {
	dir := t.TempDir()
	cpu, mem, tr := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof"), filepath.Join(dir, "trace.out")
	r := start(t, nil, "serve", "--db", "sqlite:"+filepath.Join(dir, "x.db"), "--listen", "127.0.0.1:0",
		"--cpuprofile", cpu, "--memprofile="+mem, "--trace", tr)
	r.stop(t)
	for _, f := range []string{cpu, mem, tr} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v, %d bytes", f, err, st.Size())
		}
	}
	help := execute(t, nil, "serve", "-h")
	if out := help.stdout + help.stderr; strings.Contains(out, "profile") {
		t.Errorf("serve -h shows the profile flags:\n%s", out)
	}
}

// TestProfileNotStarted: a profile that cannot be written stops the command
// before it runs, and ends those already begun: the CPU profiler, left
// running, would refuse the next start in this process.
func TestProfileNotStarted(t *testing.T) {
	dir := t.TempDir()
	p := profileFlags{cpu: filepath.Join(dir, "cpu.prof"), trace: filepath.Join(dir, "missing", "trace.out")}
	if _, err := p.begin(); err == nil {
		t.Fatal("a trace in a missing folder began")
	}
	p.trace = ""
	stop, err := p.begin()
	if err != nil {
		t.Fatalf("the CPU profile was left running: %v", err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
