package sqlite

import "github.com/chainquery/chainquery"

// Trace types and call types are stored as small integers.
var (
	traceTypes = map[string]int{chainquery.TraceCall: 0, chainquery.TraceCreate: 1, chainquery.TraceSuicide: 2}
	callTypes  = map[string]int{
		chainquery.CallTypeCall: 0, chainquery.CallTypeDelegateCall: 1,
		chainquery.CallTypeStaticCall: 2, chainquery.CallTypeCreate: 3,
	}
	traceTypeNames = []string{chainquery.TraceCall, chainquery.TraceCreate, chainquery.TraceSuicide}
	callTypeNames  = []string{chainquery.CallTypeCall, chainquery.CallTypeDelegateCall, chainquery.CallTypeStaticCall, chainquery.CallTypeCreate}
)
