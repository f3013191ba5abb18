// Package bench is the Polygon-shaped benchmark harness: ingestion of an
// internal/polychain chain by the real `chainquery ingest evm` measured
// against the raw fetch rate of the same calls, and a load run of the API
// workloads against the real `chainquery serve`, each next to a ceiling
// measured in the same run; a flood of one key against another's reads
// (Flood), and a growth run that reads the store as it grows (Grow).
// internal/cmd/cqbench is its command line; the figures are in
// docs/benchmarks.md.
//
// Everything it starts listens on 127.0.0.1 only, and every load loop is
// bounded in time and in count.
package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proc is a child process whose output is kept (the last lines) and
// watched for a line.
type Proc struct {
	Cmd  *exec.Cmd
	mu   sync.Mutex
	tail []string
	wait chan struct{} // closed when the process has exited
	err  error
	subs []chan string
}

// Command returns the argv that runs name with args, pinned to cpus with
// taskset when cpus is not empty.
func Command(cpus, name string, args ...string) []string {
	if cpus == "" {
		return append([]string{name}, args...)
	}
	return append([]string{"taskset", "-c", cpus, name}, args...)
}

// Start starts argv with its output captured.
func Start(argv []string, env ...string) (*Proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	p := &Proc{Cmd: cmd, wait: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", strings.Join(argv, " "), err)
	}
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.line(sc.Text())
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	go func() {
		p.err = cmd.Wait()
		pw.Close()
		// The last lines may still be in the scanner's buffer when the
		// process has exited: Tail must hold them once Wait returns.
		<-scanned
		close(p.wait)
	}()
	return p, nil
}

func (p *Proc) line(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tail = append(p.tail, s)
	if len(p.tail) > 40 {
		p.tail = p.tail[len(p.tail)-40:]
	}
	for _, c := range p.subs {
		select {
		case c <- s:
		default:
		}
	}
}

// Tail returns the last lines the process wrote.
func (p *Proc) Tail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.tail, "\n")
}

// WaitFor waits up to timeout for a line that re matches and returns its
// first non-empty submatch (or the whole match).
func (p *Proc) WaitFor(ctx context.Context, re *regexp.Regexp, timeout time.Duration) (string, error) {
	c := make(chan string, 1024)
	p.mu.Lock()
	lines := append([]string(nil), p.tail...)
	p.subs = append(p.subs, c)
	p.mu.Unlock()
	match := func(s string) (string, bool) {
		m := re.FindStringSubmatch(s)
		if m == nil {
			return "", false
		}
		for _, g := range m[1:] {
			if g != "" {
				return g, true
			}
		}
		return m[0], true
	}
	for _, s := range lines {
		if v, ok := match(s); ok {
			return v, nil
		}
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case s := <-c:
			if v, ok := match(s); ok {
				return v, nil
			}
		case <-p.wait:
			return "", fmt.Errorf("%s exited (%v) before saying %s:\n%s", p.Cmd.Path, p.err, re, p.Tail())
		case <-t.C:
			return "", fmt.Errorf("%s did not say %s within %s:\n%s", p.Cmd.Path, re, timeout, p.Tail())
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// Wait waits for the process to exit and returns its error, with its last
// lines on failure.
func (p *Proc) Wait() error {
	<-p.wait
	if p.err != nil {
		return fmt.Errorf("%s: %w:\n%s", p.Cmd.Path, p.err, p.Tail())
	}
	return nil
}

// Stop sends SIGINT and waits up to 15 s, then kills.
func (p *Proc) Stop() {
	_ = p.Cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.wait:
	case <-time.After(15 * time.Second):
		_ = p.Cmd.Process.Kill()
		<-p.wait
	}
}

// PeakRSS is the process's peak resident set size in bytes (VmHWM of
// /proc/PID/status) while it runs, or from its rusage once it has exited.
func (p *Proc) PeakRSS() int64 {
	if p == nil { // a Server that is not a process of ours (tests)
		return 0
	}
	select {
	case <-p.wait:
		if ru, ok := p.Cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			return ru.Maxrss << 10 // kB on Linux
		}
		return 0
	default:
	}
	n, _ := VmHWM(p.Cmd.Process.Pid)
	return n
}

// CPUSecs returns the CPU time, user and system, that the process used,
// once it has exited (0 before).
func (p *Proc) CPUSecs() float64 {
	if p == nil || p.Cmd.ProcessState == nil {
		return 0
	}
	return (p.Cmd.ProcessState.UserTime() + p.Cmd.ProcessState.SystemTime()).Seconds()
}

// VmHWM reads the peak resident set size of process pid, in bytes.
func VmHWM(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				break
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmHWM in /proc status")
}

// Run runs argv to completion and returns its standard output.
func Run(ctx context.Context, argv []string) (string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, stderr.String())
	}
	return string(out), nil
}

// MB formats bytes as megabytes.
func MB(b int64) string { return fmt.Sprintf("%.0f MB", float64(b)/(1<<20)) }
