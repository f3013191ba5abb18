package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestREADME_Commands keeps the README's commands true: the Quick start
// builds bin/chainquery with scripts/setup (which runs scripts/build) and
// puts it on the PATH before its first chainquery command, and every
// `chainquery ...` line of its code blocks names a command that exists (its
// -h succeeds).
func TestREADME_Commands(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	setup, err := os.ReadFile("../../scripts/setup")
	if err != nil {
		t.Fatal(err)
	}
	build, err := os.ReadFile("../../scripts/build")
	if err != nil {
		t.Fatal(err)
	}
	// TestVersion_ScriptsBuild checks what scripts/build stamps in.
	if !regexp.MustCompile(`(?m)^scripts/build$`).Match(setup) || !regexp.MustCompile(`(?m)^out=\$\{out:-bin/chainquery\}$`).Match(build) {
		t.Error("scripts/setup does not build bin/chainquery with scripts/build")
	}
	_, quick, _ := strings.Cut(string(readme), "## Quick start")
	quick, _, _ = strings.Cut(quick, "\n## ")
	first := strings.Index(quick, "\nchainquery ")
	path := strings.Index(quick, `scripts/setup && export PATH="$PWD/bin:$PATH"`)
	if first < 0 || path < 0 || path > first {
		t.Errorf("the Quick start must run scripts/setup and put bin on the PATH before its first chainquery command:\n%s", quick)
	}
	if strings.Contains(string(readme), "go run ./cmd/chainquery") {
		t.Error("the README runs go run ./cmd/chainquery: it compiles for minutes, silently; use chainquery (bin/chainquery)")
	}
	// Each command line of a code block: the words before the first flag.
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	seen := map[string]bool{}
	for _, b := range blocks {
		for _, line := range strings.Split(b[1], "\n") {
			line = strings.TrimSpace(line)
			if i := strings.Index(line, "$(chainquery "); i >= 0 {
				line = line[i+2:]
			}
			if !strings.HasPrefix(line, "chainquery ") {
				continue
			}
			var words []string
			for _, w := range strings.Fields(line)[1:] {
				if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "[") || strings.HasPrefix(w, "#") || strings.ContainsAny(w, `"$|&\`) {
					break
				}
				words = append(words, w)
			}
			if len(words) == 0 || words[0] == "version" || seen[strings.Join(words, " ")] {
				continue
			}
			seen[strings.Join(words, " ")] = true
			if r := execute(t, nil, append(words, "-h")...); r.code != 0 {
				t.Errorf("README: %q: chainquery %s -h exits %d: %s", line, strings.Join(words, " "), r.code, r.stderr)
			}
		}
	}
	if len(seen) < 6 {
		t.Errorf("found only %d README commands (%v): is the parser still right?", len(seen), seen)
	}
}
