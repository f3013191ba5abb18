package ingest

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// PanicError is a panic inside an ingester, turned into an error so that it
// stops one ingester and not the process: serve's API and its other
// followers go on, and `chainquery ingest` exits with a message. A panic is
// a bug; Stack is what its report needs.
type PanicError struct {
	Value any
	Where string // the function and line that panicked, when known
	Stack string
}

func (e *PanicError) Error() string {
	if e.Where == "" {
		return fmt.Sprintf("panic: %v (a bug: please report it with the log)", e.Value)
	}
	return fmt.Sprintf("panic: %v in %s (a bug: please report it with the log)", e.Value, e.Where)
}

// Recover turns a panic of the calling goroutine into a *PanicError stored
// in *err. Use it deferred, first thing, in every goroutine an ingester
// starts: a recover reaches only the panics of its own goroutine.
func Recover(err *error) {
	v := recover()
	if v == nil {
		return
	}
	*err = &PanicError{Value: v, Where: panicSite(), Stack: string(debug.Stack())}
}

// panicSite finds the frame that panicked: the first one below the runtime's
// own panic frames.
func panicSite() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	after := false
	for {
		f, more := frames.Next()
		if after && !strings.HasPrefix(f.Function, "runtime.") {
			return fmt.Sprintf("%s (%s:%d)", f.Function, shortFile(f.File), f.Line)
		}
		if strings.HasPrefix(f.Function, "runtime.gopanic") || strings.HasPrefix(f.Function, "runtime.panic") {
			after = true
		}
		if !more {
			return ""
		}
	}
}

// shortFile keeps the package directory and file name of a source path.
func shortFile(path string) string {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return path
	}
	if j := strings.LastIndexByte(path[:i], '/'); j >= 0 {
		return path[j+1:]
	}
	return path
}
