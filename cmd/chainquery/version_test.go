package main

import (
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersion checks what version prints: the version and commit stamped at
// build time, what the Go toolchain recorded when nothing was stamped, and
// the same line for --version and -version.
func TestVersion(t *testing.T) {
	t.Run("Stamped", func(t *testing.T) {
		defer func(v, c string) { version, commit = v, c }(version, commit)
		version, commit = "v1.2.0-3-g83922ed-dirty", "83922ed0c0ffee83922ed0c0ffee83922ed0c0ff"
		want := "chainquery v1.2.0-3-g83922ed-dirty (commit 83922ed0c0ffee83922ed0c0ffee83922ed0c0ff, "
		for _, arg := range []string{"version", "--version", "-version"} {
			if out := mustExecute(t, nil, arg); !strings.HasPrefix(out, want) || !strings.HasSuffix(out, ")\n") {
				t.Errorf("%s printed %q, want %q...)", arg, out, want)
			}
		}
	})

	t.Run("BuildInfo", func(t *testing.T) {
		vcs := func(revision, modified string) *debug.BuildInfo {
			return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
				Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: revision}, {Key: "vcs.modified", Value: modified}}}
		}
		installed := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.0"}}
		for _, tt := range []struct {
			name, version, commit string
			bi                    *debug.BuildInfo
			want                  string
		}{
			{"Stamped", "v1.2.0", "abc", vcs("def", "true"), "chainquery v1.2.0 (commit abc, go1.26.8)"},
			{"VCS", "", "", vcs("83922ed", "false"), "chainquery (devel) (commit 83922ed, go1.26.8)"},
			{"VCSDirty", "", "", vcs("83922ed", "true"), "chainquery (devel) (commit 83922ed-dirty, go1.26.8)"},
			{"GoInstall", "", "", installed, "chainquery v1.2.0 (go1.26.8)"},
			{"VersionOnly", "v1.2.0", "", installed, "chainquery v1.2.0 (go1.26.8)"},
			{"Nothing", "", "", nil, "chainquery (devel)"},
		} {
			if got := versionLine(tt.version, tt.commit, tt.bi); got != tt.want {
				t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
			}
		}
	})

	t.Run("ErrArgument", func(t *testing.T) {
		execute(t, nil, "--version", "now").wantFailure(t, 2, "version takes no arguments")
	})
}

// TestVersion_ScriptsBuild builds the binary the way scripts/setup does
// (scripts/build) and checks that it prints git describe's version and the
// commit: -ldflags -X names the variables by their full path, and a
// renamed variable would leave them empty without a word.
func TestVersion_ScriptsBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	git := func(args ...string) string {
		out, err := exec.Command("git", args...).Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	bin := filepath.Join(t.TempDir(), "chainquery")
	if out, err := exec.Command("../../scripts/build", bin).CombinedOutput(); err != nil {
		t.Fatalf("scripts/build: %v\n%s", err, out)
	}
	want := "chainquery " + git("describe", "--tags", "--always", "--dirty") + " (commit " + git("rev-parse", "HEAD") + ", "
	for _, arg := range []string{"version", "--version"} {
		out, err := exec.Command(bin, arg).Output()
		if err != nil {
			t.Fatalf("chainquery %s: %v", arg, err)
		}
		if !strings.HasPrefix(string(out), want) {
			t.Errorf("chainquery %s printed %q, want %q...", arg, out, want)
		}
	}
}
