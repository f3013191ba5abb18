package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// FaultError is an answer no correct node gives: not JSON, cut short, an
// empty batch, answers to calls we did not make, a result of the wrong
// type. Something between us and the node (a proxy, a load balancer, a
// node restarting) is the usual cause, so a fault is asked again like a
// transport error.
//
// Like every error of the client, its message leaves the method out: the
// caller names it, with what it knows more (the block, the node), and the
// method said twice only made messages longer.
type FaultError struct {
	Method string // the call's method; a batch names its first and how many more
	Fault  string
}

func (e *FaultError) Error() string { return "malformed answer: " + e.Fault }

// batchRefusedError is a batch answered by one error object: the node does
// not take batches, and the calls are asked again one by one. It is not
// permanent even though the error code it carries usually is.
type batchRefusedError struct{ err *RPCError }

func (e *batchRefusedError) Error() string { return "batch refused: " + e.err.Error() }

// methods names the calls of an exchange, for FaultError.Method.
func methods(reqs []*Request) string {
	if len(reqs) == 1 {
		return reqs[0].Method
	}
	return fmt.Sprintf("%s (batch of %d calls)", reqs[0].Method, len(reqs))
}

// fault is a FaultError about the exchange of reqs.
func fault(reqs []*Request, format string, args ...any) error {
	return &FaultError{Method: methods(reqs), Fault: fmt.Sprintf(format, args...)}
}

// exchangeError is an error of the exchange as a whole, which each of its
// calls gets. It says how many calls a batch held, not their method: the
// caller of each names that.
func exchangeError(reqs []*Request, err error) error {
	var fe *FaultError
	if errors.As(err, &fe) && fe.Method == "" {
		err = &FaultError{Method: methods(reqs), Fault: fe.Fault}
	}
	if len(reqs) > 1 {
		return fmt.Errorf("%w (batch of %d calls)", err, len(reqs))
	}
	return err
}

// matchAnswers gives each request of an exchange its answer from body, the
// node's reply to the calls of reqs with ids ids. It returns an error when
// the reply as a whole cannot be trusted: nothing of it is then kept.
// Answers may come in any order (the id says which call each one answers);
// a call without an answer gets a fault of its own, so that only it is
// asked again.
func matchAnswers(reqs []*Request, ids []uint64, body []byte) error {
	batch := len(reqs) > 1
	answers, err := parseAnswers(body, !batch && reqs[0].Loose)
	if err != nil {
		return fault(reqs, "%v: %s", err, excerpt(body))
	}
	array := bytes.TrimLeft(body, " \t\r\n")[0] == '['
	switch {
	case batch && !array && answers[0].Error != nil && !answers[0].hasResult():
		return &batchRefusedError{answers[0].Error}
	case batch && !array:
		return fault(reqs, "one answer object to a batch of %d calls", len(reqs))
	case len(answers) == 0:
		return fault(reqs, "an empty batch answer to %d calls", len(reqs))
	case len(answers) > len(reqs):
		return fault(reqs, "%d answers to %d calls", len(answers), len(reqs))
	}
	byID := make(map[uint64]*Request, len(reqs))
	for i, r := range reqs {
		byID[ids[i]] = r
	}
	got := make(map[uint64]bool, len(answers))
	for _, a := range answers {
		id, ok := answerID(a.ID)
		if !ok {
			if !batch && a.Error != nil && isNullID(a.ID) {
				// Some nodes drop the id when they answer a single call
				// with an error: the error is still that call's.
				reqs[0].Err = a.Error
				return nil
			}
			if a.Error != nil {
				return fault(reqs, "an answer with id %s and error %v", idText(a.ID), a.Error)
			}
			return fault(reqs, "an answer with id %s, not a number we sent", idText(a.ID))
		}
		r := byID[id]
		switch {
		case r == nil:
			return fault(reqs, "an answer to id %d, which is not a call of this request", id)
		case got[id]:
			return fault(reqs, "two answers to id %d (%s)", id, r.Method)
		}
		got[id] = true
		switch {
		case a.Error != nil:
			r.Err = a.Error
		case !a.hasResult():
			r.Err = &FaultError{Method: r.Method, Fault: "an answer with neither result nor error"}
		default:
			r.Result = a.Result
			if a.loose {
				r.answer = body
			}
		}
	}
	for i, r := range reqs {
		if !got[ids[i]] {
			r.Err = &FaultError{Method: r.Method, Fault: fmt.Sprintf("no answer to this call (%d of %d calls answered)", len(got), len(reqs))}
		}
	}
	return nil
}

// answerID reads an answer's id, which must be the JSON number we sent:
// a node that echoes it as a string or another type is not answering our
// request faithfully.
func answerID(raw []byte) (uint64, bool) {
	if len(raw) == 0 || raw[0] < '0' || raw[0] > '9' {
		return 0, false
	}
	id, err := strconv.ParseUint(string(raw), 10, 64)
	return id, err == nil
}

func isNullID(raw []byte) bool { return len(raw) == 0 || string(raw) == "null" }

func idText(raw []byte) string {
	if len(raw) == 0 {
		return "(none)"
	}
	return snippet(raw)
}

// hasResult reports whether the answer carries a result member (JSON null
// included: "no such block" is a result).
func (r rpcResponse) hasResult() bool { return r.Result != nil }

// Exact reads the answer of a call made with Loose again, member by member,
// and reports whether that changed its Result or found an error (then in
// Err): a decoder that failed on the loose Result decodes again. After it,
// or when the result was not bounded loosely, it reports false.
func (r *Request) Exact() bool {
	body := r.answer
	if body == nil {
		return false
	}
	r.answer = nil
	answers, err := parseAnswers(body, false)
	if err != nil {
		r.Result, r.Err = nil, &FaultError{Method: r.Method, Fault: fmt.Sprintf("%v: %s", err, excerpt(body))}
		return true
	}
	a := answers[0]
	switch {
	case a.Error != nil:
		r.Result, r.Err = nil, a.Error
		return true
	case len(a.Result) == len(r.Result): // both start at the result's first byte
		return false
	}
	r.Result = a.Result
	return true
}
