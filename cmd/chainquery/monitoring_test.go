package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	cqhttp "github.com/chainquery/chainquery/http"
	"github.com/chainquery/chainquery/internal/testenv"
	"github.com/chainquery/chainquery/sqlite"
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

// TestMonitoringMetrics checks that every metric the dashboard and the alert
// rules of docs/monitoring query is one serve or ingest exports, and that
// every label they select on is one of its labels: a metric renamed in the
// code without the dashboard would otherwise show an empty panel and an
// alert that can never fire. The metrics are read from serve's own registry,
// wired as serve wires it (the HTTP metrics, the Go and process collectors,
// the followers' ingestion metrics and chainquery_store_up); ingest
// --metrics-listen exports a subset of the same.
func TestMonitoringMetrics(t *testing.T) {
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "chainquery.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	srv := cqhttp.NewServer(cqhttp.Config{Store: store, Metrics: true})
	if _, err := registerIngestMetrics(srv.Registry(), store, nil); err != nil {
		t.Fatal(err)
	}
	exported := describedMetrics(srv.Registry())
	if len(exported) < 20 {
		t.Fatalf("serve's registry describes only %d metrics", len(exported))
	}

	dashboard, err := os.ReadFile(filepath.Join(monitoringDir, "grafana.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
		Templating struct {
			List []struct {
				Name       string
				Definition string
			}
		}
	}
	if err := json.Unmarshal(dashboard, &d); err != nil {
		t.Fatalf("grafana.json: %v", err)
	}
	var exprs []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		exprs = append(exprs, v.Definition)
	}
	if len(exprs) < 20 {
		t.Fatalf("grafana.json has only %d queries", len(exprs))
	}
	rules, err := os.ReadFile(filepath.Join(monitoringDir, "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ruleExpr.FindAllStringSubmatch(string(rules), -1) {
		exprs = append(exprs, m[1]+m[2])
	}
	for _, e := range exprs {
		for _, problem := range checkExpr(e, exported) {
			t.Errorf("%s\n  in %s", problem, e)
		}
	}
}

// ruleExpr matches a rule's expr in alerts.yml, on one line or as a block.
var ruleExpr = regexp.MustCompile(`(?m)expr: (?:\|\n((?:\s{10,}.*\n)+)|(.*))`)

// describedMetrics returns the name and variable labels of every metric the
// collector describes.
func describedMetrics(c prometheus.Collector) map[string][]string {
	ch := make(chan *prometheus.Desc)
	go func() { c.Describe(ch); close(ch) }()
	out := map[string][]string{}
	for d := range ch {
		m := descString.FindStringSubmatch(d.String())
		if m == nil {
			continue
		}
		var labels []string
		if m[2] != "" {
			labels = strings.Split(m[2], ",")
		}
		out[m[1]] = labels
	}
	return out
}

// descString takes a prometheus.Desc's String apart: its name and its
// variable labels.
var descString = regexp.MustCompile(`^Desc\{fqName: "([^"]+)",.*variableLabels: \{([^}]*)\}\}$`)

// Selectors and label names in PromQL, as the dashboard and the rules use it.
var (
	metricRef   = regexp.MustCompile(`\b((?:chainquery|go|process)_[a-z0-9_]+|up)\b(\{[^}]*\})?`)
	selectLabel = regexp.MustCompile(`([a-z_]+)\s*(?:=~|!~|!=|=)`)
	groupLabels = regexp.MustCompile(`\b(?:by|ignoring|without|on)\s*\(([^)]*)\)`)
)

// targetLabels are the labels Prometheus adds to every series it scrapes,
// and le of a histogram's buckets.
var targetLabels = map[string]bool{"instance": true, "job": true, "le": true}

// checkExpr returns what in the PromQL expression e is not exported: metric
// names (a histogram's _bucket, _sum and _count included) and the labels
// selected on or grouped by.
func checkExpr(e string, exported map[string][]string) []string {
	var problems []string
	known := map[string]bool{}
	for l := range targetLabels {
		known[l] = true
	}
	for _, m := range metricRef.FindAllStringSubmatch(e, -1) {
		name := m[1]
		if name == "up" {
			continue // Prometheus's own
		}
		labels, ok := exported[name]
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, cut := strings.CutSuffix(name, suffix); !ok && cut {
				labels, ok = exported[base]
			}
		}
		if !ok {
			problems = append(problems, fmt.Sprintf("metric %s is not exported", name))
			continue
		}
		own := map[string]bool{}
		for _, l := range labels {
			own[l], known[l] = true, true
		}
		for _, s := range selectLabel.FindAllStringSubmatch(m[2], -1) {
			if !own[s[1]] && !targetLabels[s[1]] {
				problems = append(problems, fmt.Sprintf("%s has no label %s", name, s[1]))
			}
		}
	}
	for _, g := range groupLabels.FindAllStringSubmatch(e, -1) {
		for _, l := range strings.Split(g[1], ",") {
			if l = strings.TrimSpace(l); l != "" && !known[l] {
				problems = append(problems, fmt.Sprintf("no metric of the expression has label %s", l))
			}
		}
	}
	return problems
}
