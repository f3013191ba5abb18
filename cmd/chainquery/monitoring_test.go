package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chainquery/chainquery/internal/testenv"
)

// monitoringDir holds the alert rules and the Grafana dashboard that ship
// with chainquery.
var monitoringDir = filepath.Join("..", "..", "docs", "monitoring")

// TestMonitoringRules checks docs/monitoring/alerts.yml with Prometheus's own
// promtool (Debian's prometheus package, installed by scripts/setup): the
// rules must parse, and alerts_test.yml fires each alert on made-up series
// and keeps it quiet below its threshold and before its `for`.
func TestMonitoringRules(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	testenv.Require(t, err == nil, "promtool not found: run scripts/setup (it installs Debian's prometheus package)")
	for _, args := range [][]string{
		{"check", "rules", "alerts.yml"},
		{"test", "rules", "alerts_test.yml"},
	} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = monitoringDir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
