package jsonrpc

import (
	"context"
	"errors"
	"net"
)

// Observer hears of the calls a Client makes, so that they can be counted
// (cmd/chainquery gives the client one that records Prometheus metrics,
// package metrics; this package stays standard library only). Its methods
// are called from the goroutines making the calls: they must be safe for
// concurrent use and return quickly.
type Observer interface {
	// Call is one call sent to the node; each call of a batch counts.
	Call(method string)

	// Error is one call that failed, of the class ErrorClass gives.
	Error(method, class string)

	// Retry is one call asked again after it failed.
	Retry(method string)
}

// The classes of a failed call, as ErrorClass returns them: a small fixed
// set, so that a metric labelled by class stays bounded whatever a node
// answers.
const (
	ClassTimeout  = "timeout"   // no whole answer within Client.Timeout
	ClassNetwork  = "network"   // the connection failed: refused, reset, no route
	ClassHTTP     = "http"      // an HTTP status other than 200
	ClassRPC      = "rpc"       // a JSON-RPC error object, a refused batch included
	ClassDecode   = "decode"    // a malformed answer: not JSON, cut short, ids mixed up, a result of the wrong type
	ClassTooLarge = "too_large" // an answer longer than Client.MaxResponse
)

// ErrorClass returns the class of err, an error of a call: one of the
// Class constants.
func ErrorClass(err error) string {
	var re *RPCError
	var refused *batchRefusedError
	var he *httpError
	var fe *FaultError
	var ne net.Error
	switch {
	case errors.As(err, &re), errors.As(err, &refused):
		return ClassRPC
	case errors.As(err, &he):
		return ClassHTTP
	case errors.Is(err, errTooLarge):
		return ClassTooLarge
	case errors.As(err, &fe):
		return ClassDecode
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return ClassTimeout
	}
	return ClassNetwork
}

// nopObserver is the Observer of a Client without one.
type nopObserver struct{}

func (nopObserver) Call(string)          {}
func (nopObserver) Error(string, string) {}
func (nopObserver) Retry(string)         {}

// observer returns c.Observer, or one that does nothing.
func (c *Client) observer() Observer {
	if c.Observer == nil {
		return nopObserver{}
	}
	return c.Observer
}
