package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/chainquery/chainquery/internal/testenv"
)

// EnvArtifacts names a directory for what tests leave to be looked at after
// a run, such as TestDocsChromium's screenshot; unset, the system's
// temporary directory.
const EnvArtifacts = "CHAINQUERY_ARTIFACTS"

// TestDocsChromium opens /docs of chainquery dev in a headless Chromium, as
// a reader would: every operation of the OpenAPI document is listed by the
// page's load event (the page carries the document: no fetch of it, no
// waiting, no virtual time), Authorize takes dev's key, and "Try it out" on
// Get Latest Block answers 200 with the dev chain's head. Every request the
// page made went to the server itself, and the browser logged no refusal of
// its Content-Security-Policy and no script error. Screenshots of the page
// as it loaded and with the answer are saved for a person to look at.
func TestDocsChromium(t *testing.T) {
	browser := chromiumPath()
	testenv.Require(t, browser != "", "chromium is not installed: scripts/setup installs Debian's chromium")

	dev := start(t, nil, "dev", "--db", "sqlite:"+filepath.Join(t.TempDir(), "dev.db"),
		"--listen", "127.0.0.1:0", "--interval", "100ms")
	key := curlCommands(t, waitOutput(t, dev, "# Token Balance by Account"))[0].headers["apikey"]
	base := dev.base()
	ops := documentedOperations(t, base)

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000),
		chromedp.NoSandbox, // CI runs as root, where Chromium's sandbox cannot start
	)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	var seen pageEvents
	ctx, cancelTab := chromedp.NewContext(ctx, chromedp.WithListener(seen.record))
	defer cancelTab()
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}

	// What the page shows at its load event, recorded by the first load
	// listener (this one, added before any script of the page runs): the
	// operations listed, and whether Swagger UI still says it is loading.
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `window.addEventListener("load", () => {
			window.atLoad = {
				listed: [...document.querySelectorAll(".opblock")].map(b =>
					b.querySelector(".opblock-summary-method").textContent + " " +
					b.querySelector(".opblock-summary-path").dataset.path + " " + b.id),
				loading: document.querySelector(".loading-container") !== null,
			};
		}, {capture: true});`,
	}); err != nil {
		t.Fatal(err)
	}
	// Navigate returns at the load event; the screenshot is taken then, with
	// no waiting for the network or anything else.
	run(t, ctx, "open /docs", chromedp.Navigate(base+"/docs"))
	shot(t, ctx, "chainquery-docs-load.png", "/docs at its load event")
	atLoad, err := chromedp.Run(ctx, chromedp.Evaluate[struct {
		Listed  []string
		Loading bool
	}](`window.atLoad`))
	if err != nil {
		t.Fatal(err)
	}
	listed := atLoad.Listed
	if atLoad.Loading {
		t.Errorf("at its load event /docs still shows Swagger UI's loading indicator")
	}
	for _, op := range ops {
		if !slices.ContainsFunc(listed, func(l string) bool {
			f := strings.Fields(l)
			return len(f) == 3 && f[0] == op.method && f[1] == op.path && strings.HasSuffix(f[2], "-"+op.id)
		}) {
			t.Errorf("/docs does not list %s %s (%s); it lists:\n%s", op.method, op.path, op.id, strings.Join(listed, "\n"))
		}
	}
	if len(listed) != len(ops) {
		t.Errorf("at its load event /docs lists %d operations, the document has %d", len(listed), len(ops))
	}

	// Authorize with dev's key, then try Get Latest Block on polygon.
	run(t, ctx, "authorize",
		chromedp.Click(chromedp.CSS(".auth-wrapper .btn.authorize")),
		chromedp.SendKeys(chromedp.CSS(".modal-ux .auth-container input"), key),
		chromedp.Click(chromedp.CSS(".modal-ux .auth-btn-wrapper .authorize")),
		chromedp.Click(chromedp.CSS(".modal-ux .btn-done")),
	)
	head := latest(t, base, "polygon", key)
	op := "#operations-default-getLatestBlock"
	run(t, ctx, "try Get Latest Block",
		chromedp.Click(chromedp.CSS(op+" .opblock-summary-control")),
		chromedp.Click(chromedp.CSS(op+" .try-out__btn")),
		chromedp.WaitVisible(chromedp.CSS(op+` tr[data-param-name="chain"] select`)),
		// React reads a select's value from its change event.
		chromedp.Evaluate[chromedp.Void](`(() => {
			const s = document.querySelector('`+op+` tr[data-param-name="chain"] select');
			s.value = "polygon";
			s.dispatchEvent(new Event("change", {bubbles: true}));
		})()`),
		chromedp.Click(chromedp.CSS(op+" .btn.execute")),
		chromedp.WaitVisible(chromedp.CSS(op+" .live-responses-table .response-col_status")),
	)
	answer, err := chromedp.Run(ctx, chromedp.Evaluate[struct {
		Status, Body, Curl string
	}](`(() => {
		const op = document.querySelector('`+op+`');
		const text = sel => (op.querySelector(sel) || {}).textContent || "";
		return {
			Status: text(".live-responses-table tbody .response-col_status").trim(),
			Body: text(".live-responses-table tbody .response-col_description pre"),
			Curl: text(".curl-command pre, .curl-command code"),
		};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		BlockNumber *int64 `json:"block_number"`
	}
	if json.Unmarshal([]byte(answer.Body), &body) != nil || body.BlockNumber == nil || *body.BlockNumber < head {
		t.Errorf("Try it out on Get Latest Block answered %q: %q; want 200 and block_number of at least %d (curl: %s)",
			answer.Status, answer.Body, head, answer.Curl)
	} else if answer.Status != "200" {
		t.Errorf("Try it out on Get Latest Block: status %q, want 200", answer.Status)
	}
	if !strings.Contains(answer.Curl, "apikey: "+key) {
		t.Errorf("the request sent no apikey header from Authorize: %s", answer.Curl)
	}

	shot(t, ctx, "chainquery-docs.png", "/docs after Try it out")

	// Nothing left the machine, and nothing was refused or broke.
	server, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	requests, problems := seen.get()
	if len(requests) < 5 {
		t.Errorf("the page made %d requests, want the page, its assets and the tried operation: %v", len(requests), requests)
	}
	for _, r := range requests {
		u, err := url.Parse(r)
		if err != nil || u.Scheme != "data" && u.Host != server.Host {
			t.Errorf("the page sent a request to %s, not to the server %s", r, server.Host)
		} else if u.Path == "/openapi.json" {
			t.Errorf("the page fetched %s: the document it carries should be all it needs", r)
		}
	}
	for _, p := range problems {
		t.Errorf("the browser logged: %s", p)
	}
}

// shot saves a screenshot of the whole page as name in the artifacts
// directory ($CHAINQUERY_ARTIFACTS, else the system's temporary one).
func shot(t *testing.T, ctx context.Context, name, what string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot of %s: %v", what, err)
	}
	dir := os.Getenv(EnvArtifacts)
	if dir == "" {
		dir = os.TempDir()
	}
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of %s: %s", what, path)
}

// pageEvents collects what the tab reports while the test runs: the URL of
// every request, and every error the browser logged (a refusal of the
// Content-Security-Policy among them) or script exception.
type pageEvents struct {
	mu       sync.Mutex
	requests []string
	problems []string
}

// record is the tab's listener: it runs in the tab's loop, so it only
// appends.
func (p *pageEvents) record(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		p.requests = append(p.requests, ev.Request.URL)
	case *log.EventEntryAdded:
		// A 404 for /favicon.ico would be a network error of the browser's
		// own, not the page's; the page names its icon, so none is expected.
		if ev.Entry.Level == log.EntryLevelError {
			p.problems = append(p.problems, fmt.Sprintf("%s %s (%s)", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
		}
	case *runtime.EventExceptionThrown:
		p.problems = append(p.problems, "exception: "+ev.ExceptionDetails.Text)
	}
}

func (p *pageEvents) get() (requests, problems []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests), slices.Clone(p.problems)
}

// run runs the steps of one part of the test and fails it, naming the part,
// at the first error.
func run(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// chromiumPath returns the Chromium (or Chrome) on the PATH, or "".
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// docOperation is one operation of the OpenAPI document.
type docOperation struct{ method, path, id string }

// documentedOperations returns every operation of the document the server
// at base serves.
func documentedOperations(t *testing.T, base string) []docOperation {
	t.Helper()
	resp, err := http.Get(base + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var ops []docOperation
	for p, methods := range doc.Paths {
		for m, op := range methods {
			ops = append(ops, docOperation{strings.ToUpper(m), p, op.OperationID})
		}
	}
	if len(ops) < 9 {
		t.Fatalf("the document has %d operations: %v", len(ops), ops)
	}
	return ops
}
