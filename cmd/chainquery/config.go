package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"reflect"
	"slices"
	"strings"
)

// config is the file of serve --config: where the API listens, which
// database it reads (and which replica of it, for PostgreSQL), and which
// chains it follows (docs/config.md).
//
// The format is JSON, because the standard library reads it and every
// operator's tools write it, with one addition: whole-line // comments, so
// that an example file can explain itself. Decoding is strict: a misspelt
// field would otherwise be silently ignored and its default used, which is
// the worst kind of configuration error.
type config struct {
	DB     string        `json:"db"`
	ReadDB string        `json:"read_db"` // serve --read-db
	Listen string        `json:"listen"`
	Chains []chainConfig `json:"chains"`

	// ReadyMaxLag is serve's --ready-max-lag, in seconds.
	ReadyMaxLag int `json:"ready_max_lag"`

	// The request deadline and fair share between keys: serve's flags of
	// the same names (share.go).
	shareConfig
}

type chainConfig struct {
	Chain         string  `json:"chain"`
	RPC           string  `json:"rpc"`
	From          *uint64 `json:"from"`
	Confirmations *uint64 `json:"confirmations"`
	Traces        string  `json:"traces"`
	Concurrency   int     `json:"concurrency"`
	Batch         int     `json:"batch"`
	MaxResponseMB int     `json:"rpc_max_response_mb"`
	RPCTimeout    string  `json:"rpc_timeout"`
}

var (
	configFields = []string{"db", "read_db", "listen", "chains", "ready_max_lag"}
	chainFields  = []string{"chain", "rpc", "from", "confirmations", "traces", "concurrency", "batch", "rpc_max_response_mb", "rpc_timeout"}
)

// loadConfig reads and checks the file at path. Its errors start with the
// file name and say which field is wrong and what it should be.
func loadConfig(path string) (*config, []chainSettings, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	cfg, chains, err := parseConfig(data)
	if err != nil {
		return nil, nil, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, chains, nil
}

// parseConfig decodes and validates a config file's contents.
func parseConfig(data []byte) (*config, []chainSettings, error) {
	data = stripComments(data)
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, errors.New("the file is empty: want a JSON object (docs/config.md has an example)")
	}
	if err := checkFields(data); err != nil {
		return nil, nil, err
	}
	var cfg config
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields() // checkFields names them better; this is the safety net
	if err := dec.Decode(&cfg); err != nil {
		return nil, nil, jsonError(data, err)
	}
	if cfg.DB != "" {
		if _, err := parseDSN(cfg.DB); err != nil {
			return nil, nil, fmt.Errorf("db: %s", strings.ReplaceAll(err.Error(), "--db ", ""))
		}
	}
	if cfg.ReadDB != "" {
		if d, err := parseDSN(cfg.ReadDB); err != nil {
			return nil, nil, fmt.Errorf("read_db: %s", strings.ReplaceAll(err.Error(), "--db ", ""))
		} else if d.scheme != "postgres" {
			return nil, nil, errors.New("read_db must be a postgres:// DSN (a streaming replica of the db server)")
		}
	}
	if cfg.Listen != "" {
		if _, _, err := net.SplitHostPort(cfg.Listen); err != nil {
			return nil, nil, fmt.Errorf("listen must be host:port, e.g. %s", defaultListen)
		}
	}
	chains := make([]chainSettings, len(cfg.Chains))
	seen := map[string]int{}
	for i, cc := range cfg.Chains {
		at := fmt.Sprintf("chains[%d]", i)
		s, err := cc.settings()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", at, err)
		}
		if j, dup := seen[cc.Chain]; dup {
			return nil, nil, fmt.Errorf("%s: chain %s is already followed by chains[%d]: one follower per chain", at, cc.Chain, j)
		}
		seen[cc.Chain] = i
		chains[i] = s
	}
	return &cfg, chains, nil
}

// settings checks one chain's entry and fills its defaults.
func (cc chainConfig) settings() (chainSettings, error) {
	if cc.Chain == "" {
		return chainSettings{}, errors.New(`"chain" is required`)
	}
	chain, err := parseEVMChain(cc.Chain)
	if err != nil {
		return chainSettings{}, fmt.Errorf("chain %w", err)
	}
	if cc.RPC == "" {
		return chainSettings{}, fmt.Errorf(`%s: "rpc" is required`, chain)
	}
	if err := checkRPC(cc.RPC); err != nil {
		return chainSettings{}, fmt.Errorf("%s: rpc %w", chain, err)
	}
	s := newChainSettings(chain, cc.RPC)
	s.from = cc.From
	if cc.Confirmations != nil {
		s.confirmations = *cc.Confirmations
	}
	if cc.Traces != "" {
		if err := checkTraces(cc.Traces); err != nil {
			return chainSettings{}, fmt.Errorf("%s: traces %w", chain, err)
		}
		s.traces = cc.Traces
	}
	// 0 is "not given": the JSON zero, and never a usable value either.
	if cc.Concurrency != 0 {
		if err := checkRange(cc.Concurrency, maxConcurrency); err != nil {
			return chainSettings{}, fmt.Errorf("%s: concurrency %w", chain, err)
		}
		s.concurrency = cc.Concurrency
	}
	if cc.Batch != 0 {
		if err := checkRange(cc.Batch, maxBatch); err != nil {
			return chainSettings{}, fmt.Errorf("%s: batch %w", chain, err)
		}
		s.batch = cc.Batch
	}
	if cc.MaxResponseMB != 0 {
		if err := checkRange(cc.MaxResponseMB, maxResponseMB); err != nil {
			return chainSettings{}, fmt.Errorf("%s: rpc_max_response_mb %w", chain, err)
		}
		s.maxResponseMB = cc.MaxResponseMB
	}
	if cc.RPCTimeout != "" {
		d, err := parseRPCTimeout(cc.RPCTimeout)
		if err != nil {
			return chainSettings{}, fmt.Errorf("%s: rpc_timeout %w", chain, err)
		}
		s.rpcTimeout = d
	}
	return s, nil
}

// stripComments blanks every line whose first non-blank characters are //.
// A JSON string cannot span lines, so such a line is never inside one. The
// line is overwritten with spaces rather than removed, so that offsets in
// decoding errors still point at the right line and column.
func stripComments(data []byte) []byte {
	out := slices.Clone(data)
	start := 0
	for start < len(out) {
		end := bytes.IndexByte(out[start:], '\n')
		if end < 0 {
			end = len(out)
		} else {
			end += start
		}
		line := out[start:end]
		if bytes.HasPrefix(bytes.TrimLeft(line, " \t"), []byte("//")) {
			for i := range line {
				if line[i] != '\r' {
					line[i] = ' '
				}
			}
		}
		start = end + 1
	}
	return out
}

// checkFields rejects unknown fields, naming where they are and what is
// allowed; encoding/json would only name the field.
func checkFields(data []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return jsonError(data, err)
	}
	if err := unknownField(top, slices.Concat(configFields, shareFields), "the top level"); err != nil {
		return err
	}
	var chains []map[string]json.RawMessage
	if raw, ok := top["chains"]; ok && json.Unmarshal(raw, &chains) == nil {
		for i, c := range chains {
			if err := unknownField(c, chainFields, fmt.Sprintf("chains[%d]", i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func unknownField(obj map[string]json.RawMessage, known []string, where string) error {
	var unknown []string
	for k := range obj {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return fmt.Errorf("unknown field %q in %s (the fields are: %s)", unknown[0], where, strings.Join(known, ", "))
}

// jsonError turns a decoding error into one that says where in the file.
func jsonError(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		// Offset counts the offending byte.
		line, col := position(data, syn.Offset-1)
		return fmt.Errorf("line %d, column %d: invalid JSON: %s (only whole-line // comments are allowed)", line, col, syn.Error())
	case errors.As(err, &typ):
		// Offset is the end of the value, which may be on a later line than
		// its field in a long value; the line is still the best pointer.
		line, _ := position(data, typ.Offset)
		if typ.Field == "" {
			return fmt.Errorf("line %d: want a JSON object with the fields %s", line, strings.Join(configFields, ", "))
		}
		return fmt.Errorf("line %d: %s must be %s, not %s", line, typ.Field, jsonKind(typ.Type), typ.Value)
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

// position returns the line and column (from 1) of a byte offset.
func position(data []byte, offset int64) (line, col int) {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// jsonKind names what a Go type takes in JSON, for error messages.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return t.String()
}
