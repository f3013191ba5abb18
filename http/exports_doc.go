package http

// exportTracesDoc and exportLogsDoc are the OpenAPI document of the
// exports (exports.go).
var (
	exportTracesDoc = operation{
		id:      "exportTraces",
		summary: "Export Traces",
		description: "Every trace Filter Traces would page through for the same body, as NDJSON: one trace a line, in Filter Traces' " +
			"row shape and order, and after each chunk of rows a checkpoint line {\"cursor\": \"...\"}. The last line of a complete " +
			"export is {\"cursor\": null}; a stream that ends without it was cut (the connection, the server's per-response budget " +
			"of 1,000,000 rows or 20 s, or the key's share of the database): send the same body with the last cursor received to " +
			"resume, and drop the rows received after that checkpoint, which are sent again. The body is Filter Traces' plus cursor; " +
			"a block range may hold any number of blocks. Each chunk is admitted and charged like a request of its own; a refusal " +
			"before the first line is a 429. Never cached.",
		body:   ref("TraceExport"),
		stream: "Trace",
	}
	exportLogsDoc = operation{
		id:      "exportLogs",
		summary: "Export Logs",
		description: "Every log Filter Logs would page through for the same body, as NDJSON: one log a line, in Filter Logs' " +
			"row shape and order, and after each chunk of rows a checkpoint line {\"cursor\": \"...\"}, as Export Traces. The body " +
			"is Filter Logs' plus cursor; the range may hold any number of blocks, with or without an address or a topic0. " +
			"Never cached.",
		body:   ref("LogExport"),
		stream: "Log",
	}
)

// exportSchemas are the schemas of the exports' bodies and checkpoint lines.
func exportSchemas() obj {
	cursor := kv{"cursor", obj{{"type", []string{"string", "null"}}, {"minLength", 1}, {"pattern", "^[A-Za-z0-9_-]+$"},
		{"description", "The cursor of the last checkpoint line received, to resume a cut export of the same body; absent or null to start."}}}
	return obj{
		{"TraceExport", exportBody("The Filter Traces body (TraceFilter) and cursor. The block range may hold any number of blocks. "+
			"Rules the schema cannot state: to_block is at least from_block; to_datetime is not before from_datetime; a cursor belongs "+
			"to the body it was given for. Unknown fields are rejected.",
			append(traceFilterMembers(), cursor)...)},
		{"LogExport", exportBody("The Filter Logs body (LogFilter) and cursor. The range may hold any number of blocks, with or "+
			"without an address or a topic0. Rules the schema cannot state: to_block is at least from_block; to_datetime is not "+
			"before from_datetime; a cursor belongs to the body it was given for. Unknown fields are rejected.",
			append(logFilterMembers(), cursor)...)},
		{"ExportCheckpoint", object("A checkpoint line of an export: the cursor naming the position after the rows before it, "+
			"or null on the last line of a complete export.", obj{
			{"cursor", obj{{"type", []string{"string", "null"}}, {"pattern", "^[A-Za-z0-9_-]+$"}}},
		})},
	}
}

// exportBody is rangeBody without the 100 blocks of the filters' block
// ranges: an export reads any range, a window at a time.
func exportBody(desc string, members ...kv) obj {
	body := rangeBody(desc, members...)
	for i, m := range body {
		if m.k != "properties" {
			continue
		}
		props := append(obj{}, m.v.(obj)...)
		for j, p := range props {
			if p.k == "to_block" {
				to := append(obj{}, p.v.(obj)...)
				for k, f := range to {
					if f.k == "description" {
						to[k].v = "Last block of a block range, inclusive; goes with from_block and is at least from_block. null counts as absent."
					}
				}
				props[j].v = to
			}
		}
		body[i].v = props
	}
	return body
}
