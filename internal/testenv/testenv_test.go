package testenv_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/chainquery/chainquery/internal/testenv"
)

// childEnv makes TestMissing, run in a child process of the test binary,
// call one helper on a missing prerequisite (its value names which): Skip
// and Fatal stop a real test, which only its verdict in a process of its own
// shows.
const childEnv = "CHAINQUERY_TESTENV_CHILD"

// unsetEnv is never set: the child asks for it.
const unsetEnv = "CHAINQUERY_TESTENV_NEVER_SET"

// TestMissing checks that a missing prerequisite fails the test when CI is
// set, skips it when not, and stops it either way.
func TestMissing(t *testing.T) {
	if mode := os.Getenv(childEnv); mode != "" {
		child(t, mode)
		return
	}
	for _, tt := range []struct {
		name, mode, ci string
		verdict        string   // of the child's test
		output         []string // in the child's output
	}{
		{"RequireCI", "require", "1", "FAIL", []string{"the frobnicator is missing: install it", "CI is set"}},
		{"RequireLocal", "require", "", "SKIP", []string{"the frobnicator is missing: install it"}},
		{"RequirePresent", "present", "1", "PASS", []string{"continued"}},
		{"EnvCI", "env", "true", "FAIL", []string{unsetEnv + " is not set: export it"}},
		{"EnvLocal", "env", "", "SKIP", []string{unsetEnv + " is not set: export it"}},
		{"PostgresCI", "postgres", "1", "FAIL", []string{testenv.PostgresAdmin + " is not set", "scripts/pg"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestMissing$", "-test.v", "-test.count=1")
			cmd.Env = []string{
				childEnv + "=" + tt.mode,
				testenv.EnvCI + "=" + tt.ci,
			}
			for _, kv := range os.Environ() {
				name, _, _ := strings.Cut(kv, "=")
				switch name {
				case childEnv, testenv.EnvCI, unsetEnv, testenv.PostgresAdmin:
				default:
					cmd.Env = append(cmd.Env, kv)
				}
			}
			out, err := cmd.CombinedOutput()
			if failed := err != nil; failed != (tt.verdict == "FAIL") {
				t.Errorf("child failed: %v, want %v", err, tt.verdict == "FAIL")
			}
			if !strings.Contains(string(out), "--- "+tt.verdict+": TestMissing") {
				t.Errorf("no %s verdict", tt.verdict)
			}
			for _, s := range tt.output {
				if !strings.Contains(string(out), s) {
					t.Errorf("output lacks %q", s)
				}
			}
			if tt.verdict != "PASS" && strings.Contains(string(out), "continued") {
				t.Error("the test went on after the missing prerequisite")
			}
			if t.Failed() {
				t.Logf("child output:\n%s", out)
			}
		})
	}
}

// child is TestMissing in the child process.
func child(t *testing.T, mode string) {
	switch mode {
	case "require":
		testenv.Require(t, false, "the frobnicator is missing: %s", "install it")
	case "present":
		testenv.Require(t, true, "never shown")
	case "env":
		testenv.Env(t, unsetEnv, "export it")
	case "postgres":
		testenv.Postgres(t, testenv.PostgresAdmin)
	default:
		t.Fatalf("unknown mode %q", mode)
	}
	t.Log("continued")
}
