package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// newFlagSet returns a FlagSet that never prints or exits by itself: parse
// turns its errors into usage errors so that every message has the one
// "chainquery: ..." shape, and prints help only when it is asked for.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses args into fs. On -h it prints usage (a synopsis and
// description) and the flags to Stdout and returns flag.ErrHelp. Positional
// arguments are refused: every command takes flags only, and a stray word is
// usually a flag whose dashes were lost.
func (m *Main) parse(fs *flag.FlagSet, args []string, usage string) error {
	help := fs.Name() + " -h"
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(m.Stdout, usage, "\nFlags:\n")
		fs.SetOutput(m.Stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		return flag.ErrHelp
	} else if err != nil {
		return usagef(help, "%s", err)
	}
	if fs.NArg() > 0 {
		return usagef(help, "unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// required returns a usage error naming the first flag of names left empty.
func required(fs *flag.FlagSet, names ...string) error {
	for _, n := range names {
		if f := fs.Lookup(n); f != nil && f.Value.String() == "" {
			return usagef(fs.Name()+" -h", "--%s is required", n)
		}
	}
	return nil
}

// flagsSet returns the names of the flags given on the command line.
func flagsSet(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}
