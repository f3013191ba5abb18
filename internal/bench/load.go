package bench

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Server is a running `chainquery serve` with an API key.
type Server struct {
	URL  string
	Key  string
	Proc *Proc
}

var listening = regexp.MustCompile(`"url":"(http://127\.0\.0\.1:[0-9]+)"|url=(http://127\.0\.0\.1:[0-9]+)`)

// StartServer creates an API key in dsn and starts `chainquery serve` on it,
// listening on a free port of 127.0.0.1, pinned to cpus if not empty.
func StartServer(ctx context.Context, chainquery, dsn, cpus string, extra ...string) (*Server, error) {
	return StartReplicaServer(ctx, chainquery, dsn, dsn, cpus, extra...)
}

// StartReplicaServer is StartServer reading from dsn, a streaming
// replica of primary (`serve --read-db`), where the key is created.
func StartReplicaServer(ctx context.Context, chainquery, dsn, primary, cpus string, extra ...string) (*Server, error) {
	key, err := CreateKey(ctx, chainquery, primary, fmt.Sprintf("bench-%d", time.Now().UnixNano()))
	if err != nil {
		return nil, err
	}
	args := []string{"serve", "--db", dsn, "--listen", "127.0.0.1:0", "--log-format", "json"}
	if primary != dsn {
		args = []string{"serve", "--db", primary, "--read-db", dsn, "--listen", "127.0.0.1:0", "--log-format", "json"}
	}
	args = append(args, extra...)
	p, err := Start(Command(cpus, chainquery, args...))
	if err != nil {
		return nil, err
	}
	m, err := p.WaitFor(ctx, listening, 60*time.Second)
	if err != nil {
		p.Stop()
		return nil, err
	}
	return &Server{URL: m, Key: key, Proc: p}, nil
}

// CreateKey creates an API key named name, for every endpoint, in dsn with
// `chainquery keys create`, and returns it.
func CreateKey(ctx context.Context, chainquery, dsn, name string) (string, error) {
	out, err := Run(ctx, []string{chainquery, "keys", "create", "--db", dsn, "--name", name, "--endpoints", "all"})
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return strings.TrimSpace(lines[len(lines)-1]), nil
}

// Stop stops the server.
func (s *Server) Stop() { s.Proc.Stop() }

// Do makes one request of t against the server and returns the status and
// body.
func (s *Server) Do(ctx context.Context, t vegeta.Target) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, t.Method, s.URL+t.URL, bytes.NewReader(t.Body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("apikey", s.Key)
	if t.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := plainClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// plainClient asks for answers as they are: Go's transport would otherwise
// send Accept-Encoding: gzip by itself (and decompress the answer).
var plainClient = &http.Client{Transport: &http.Transport{DisableCompression: true}}

// Workload is one kind of request: its targets are paths relative to the
// server (method, path and query, body), taken in turn.
type Workload struct {
	Name    string
	Targets []vegeta.Target
	Count   int64 // the API's count for the first target, or -1
}

// LoadOptions bound a load run.
type LoadOptions struct {
	Duration    time.Duration // per measurement
	Connections int           // concurrent connections, one worker each
	MaxRequests uint64        // per measurement
	// Rounds of the pair (ceiling, then server) per workload, 1 if 0. This
	// host's ceiling moves by half from one measurement to the next with
	// its neighbours' load; a pair measured again and again, its ratio
	// taken each time, says what one pair cannot.
	Rounds   int
	Progress func(string)
}

// Stats is one measurement.
type Stats struct {
	Requests uint64
	Rate     float64 // successful answers per second
	P50, P99 time.Duration
	Errors   uint64
	Err      string // the first error seen
}

// LoadRow is one workload: the ceiling and the server, measured one after
// the other in each round, and the server's peak RSS after it. Ceiling and
// Server are the round of the median ratio.
type LoadRow struct {
	Workload string
	Count    int64
	Bytes    int // size of the first target's answer
	Ceiling  Stats
	Server   Stats
	Rounds   []RoundStats // every round, in order; one when not asked for more
	PeakRSS  int64
}

// RoundStats is one round's pair.
type RoundStats struct{ Ceiling, Server Stats }

// Ratio is the round's server rate over its ceiling's.
func (r RoundStats) Ratio() float64 { return r.Server.Rate / r.Ceiling.Rate }

func (o LoadOptions) withDefaults() LoadOptions {
	if o.Connections <= 0 {
		o.Connections = 32
	}
	if o.Duration <= 0 {
		o.Duration = 8 * time.Second
	}
	if o.MaxRequests == 0 {
		o.MaxRequests = 5_000_000
	}
	if o.Rounds <= 0 {
		o.Rounds = 1
	}
	return o
}

// Ratio is the server's rate over the ceiling's, in the round of the
// median ratio.
func (r *LoadRow) Ratio() float64 { return r.Server.Rate / r.Ceiling.Rate }

// median sets Ceiling and Server to the round whose ratio is the median
// (the lower middle one for an even count).
func (r *LoadRow) median() {
	byRatio := slices.Clone(r.Rounds)
	slices.SortStableFunc(byRatio, func(a, b RoundStats) int { return cmp.Compare(a.Ratio(), b.Ratio()) })
	m := byRatio[(len(byRatio)-1)/2]
	r.Ceiling, r.Server = m.Ceiling, m.Server
}

// Load measures each workload: first the ceiling, a bare net/http server on
// 127.0.0.1 that checks the apikey header and answers the pre-encoded body
// the real server gave for the same request, then the real server, with the
// same load. No request asks for compression (no Accept-Encoding header),
// so that both serve the same bytes: the server compresses for clients that
// ask, which the ceiling does not.
func Load(ctx context.Context, s *Server, workloads []Workload, o LoadOptions) ([]*LoadRow, error) {
	o = o.withDefaults()
	var rows []*LoadRow
	for _, w := range workloads {
		if o.Progress != nil {
			o.Progress(fmt.Sprintf("load: %s (%d targets)", w.Name, len(w.Targets)))
		}
		answers := map[string][]byte{}
		row := &LoadRow{Workload: w.Name, Count: w.Count}
		for i, t := range w.Targets {
			body, err := answer(ctx, s, w.Name, t)
			if err != nil {
				return rows, err
			}
			if i == 0 {
				row.Bytes = len(body)
			}
			answers[targetKey(t.Method, t.URL, t.Body)] = body
		}
		ceiling, stop, err := startCeiling(s.Key, answers)
		if err != nil {
			return rows, err
		}
		for range o.Rounds {
			var r RoundStats
			r.Ceiling = attack(ctx, ceiling, s.Key, w, o)
			r.Server = attack(ctx, s.URL, s.Key, w, o)
			row.Rounds = append(row.Rounds, r)
		}
		stop()
		row.median()
		row.PeakRSS = s.Proc.PeakRSS()
		rows = append(rows, row)
		if err := ctx.Err(); err != nil {
			return rows, err
		}
	}
	return rows, nil
}

func targetKey(method, uri string, body []byte) string {
	return method + " " + uri + "\x00" + string(body)
}

// startCeiling serves answers on 127.0.0.1 after the apikey check, as
// cheaply as net/http allows.
func startCeiling(key string, answers map[string][]byte) (string, func(), error) {
	return serveKeyed(key, func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Body != nil {
			body, _ = io.ReadAll(io.LimitReader(r.Body, 64<<10))
		}
		a, ok := answers[targetKey(r.Method, r.URL.RequestURI(), body)]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(a)
	})
}

// serveKeyed serves h on a free port of 127.0.0.1 to the requests that
// carry key in their apikey header (401 for the others), and returns its
// URL and its stop.
func serveKeyed(key string, h http.HandlerFunc) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("apikey") != key {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h(w, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// boundedPacer sends as fast as the workers allow, up to max requests.
type boundedPacer struct{ max uint64 }

func (p boundedPacer) Pace(_ time.Duration, hits uint64) (time.Duration, bool) {
	return 0, hits >= p.max
}

func (p boundedPacer) Rate(time.Duration) float64 { return 0 }

// attack runs one measurement of w against base.
func attack(ctx context.Context, base, key string, w Workload, o LoadOptions) Stats {
	targets := make([]vegeta.Target, len(w.Targets))
	for i, t := range w.Targets {
		t.URL = base + t.URL
		t.Header = http.Header{"Apikey": {key}}
		if t.Body != nil {
			t.Header.Set("Content-Type", "application/json")
		}
		targets[i] = t
	}
	n := uint64(o.Connections)
	// vegeta's own transport leaves compression on, so Go would add
	// Accept-Encoding: gzip to every request: this one is vegeta's without it.
	tr := &http.Transport{
		Proxy:              http.ProxyFromEnvironment,
		DialContext:        (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext,
		DisableCompression: true,
	}
	a := vegeta.NewAttacker(vegeta.Client(&http.Client{Transport: tr}),
		vegeta.Workers(n), vegeta.MaxWorkers(n), vegeta.Connections(o.Connections),
		vegeta.MaxConnections(o.Connections), vegeta.KeepAlive(true), vegeta.MaxBody(0), vegeta.Timeout(30*time.Second))
	var m vegeta.Metrics
	var errs uint64
	var first string
	results := a.Attack(vegeta.NewStaticTargeter(targets...), boundedPacer{o.MaxRequests}, o.Duration, w.Name)
	for {
		select {
		case r, ok := <-results:
			if !ok {
				m.Close()
				st := Stats{Requests: m.Requests, P50: m.Latencies.P50, P99: m.Latencies.P99, Errors: errs, Err: first}
				if secs := m.Duration.Seconds() + m.Wait.Seconds(); secs > 0 {
					st.Rate = float64(m.Requests-errs) / secs
				}
				return st
			}
			if r.Error != "" || r.Code != http.StatusOK {
				errs++
				if first == "" {
					first = fmt.Sprintf("%d %s", r.Code, r.Error)
				}
			}
			m.Add(r)
		case <-ctx.Done():
			a.Stop()
			for range results {
			}
			m.Close()
			return Stats{Requests: m.Requests, Errors: errs, Err: ctx.Err().Error()}
		}
	}
}

// LoadTable is the markdown table of a load run. With rounds, the figures
// are the median round's, and a column gives every round's share.
func LoadTable(rows []*LoadRow) string {
	var b strings.Builder
	rounds := len(rows) > 0 && len(rows[0].Rounds) > 1
	each, dash := "", ""
	if rounds {
		each, dash = " % each round |", "---|"
	}
	b.WriteString("| workload | count | answer | ceiling req/s | server req/s | % of ceiling |" + each + " server p50 | server p99 | ceiling p50 | ceiling p99 | errors | server peak RSS |\n")
	b.WriteString("|---|---|---|---|---|---|" + dash + "---|---|---|---|---|---|\n")
	for _, r := range rows {
		count := ""
		if r.Count >= 0 {
			count = fmt.Sprint(r.Count)
		}
		var errs uint64
		var shares []string
		for _, rd := range r.Rounds {
			errs += rd.Server.Errors + rd.Ceiling.Errors
			shares = append(shares, fmt.Sprintf("%.1f", rd.Ratio()*100))
		}
		if rounds {
			each = " " + strings.Join(shares, " / ") + " |"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.0f | %.0f | %.1f%% |%s %s | %s | %s | %s | %d | %s |\n",
			r.Workload, count, kb(r.Bytes), r.Ceiling.Rate, r.Server.Rate, r.Ratio()*100, each,
			ms(r.Server.P50), ms(r.Server.P99), ms(r.Ceiling.P50), ms(r.Ceiling.P99), errs, MB(r.PeakRSS))
	}
	return b.String()
}

func kb(n int) string {
	if n < 1000 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f KB", float64(n)/1000)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", d.Seconds()*1000) }
