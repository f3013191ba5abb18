package jsonrpc_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chainquery/chainquery/jsonrpc"
)

// gatewayPage is what a reverse proxy answers for a node that is down: a
// page of markup, its first line saying nothing yet.
var gatewayPage = `
<!DOCTYPE html>
<html>
<head><title>502 Bad Gateway</title></head>
<body>
<center><h1>502 Bad Gateway</h1></center>
<hr><center>nginx</center>
` + strings.Repeat("<!-- a padding comment, as some proxies add -->\n", 20) + `</body>
</html>
`

// TestClientErrorMessages checks the exact message of a call that fails for
// good: the method is not in it (the caller names it), and an answer that
// is not JSON-RPC shows its first line, at most 200 bytes of it, with "…"
// where it was cut, never the whole page.
func TestClientErrorMessages(t *testing.T) {
	long := strings.Repeat("x", 300)
	for _, tt := range []struct {
		name        string
		status      int
		contentType string
		body        string
		batch       bool
		want        string
	}{
		{"HTMLPage", 200, "text/html", gatewayPage, false, "malformed answer: an HTML page instead of JSON: <!DOCTYPE html>…"},
		{"BadGatewayPage", 502, "text/html", gatewayPage, false, "http 502 Bad Gateway: <!DOCTYPE html>…"},
		{"BadGatewayPageBatch", 502, "text/html", gatewayPage, true, "http 502 Bad Gateway: <!DOCTYPE html>… (batch of 2 calls)"},
		{"BadGatewayLine", 502, "text/plain", "upstream connect error\n", false, "http 502 Bad Gateway: upstream connect error"},
		{"BadGatewayEmpty", 502, "text/plain", "", false, "http 502 Bad Gateway"},
		{"LongLine", 503, "text/plain", long + "\nmore", false, "http 503 Service Unavailable: " + long[:200] + "…"},
		{"LongLineUTF8", 503, "text/plain", strings.Repeat("x", 199) + "é" + long, false, "http 503 Service Unavailable: " + long[:199] + "…"},
		{"NotJSON", 200, "application/json", "Welcome to the node!\nIt speaks HTTP, not JSON-RPC.", false,
			"malformed answer: empty or non-JSON response: Welcome to the node!…"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", tt.contentType)
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			t.Cleanup(srv.Close)
			c := jsonrpc.NewClient(srv.URL)
			c.Attempts = 1

			var err error
			if !tt.batch {
				var v string
				err = c.Call(context.Background(), &v, "eth_chainId")
			} else {
				reqs := []*jsonrpc.Request{{Method: "eth_chainId"}, {Method: "eth_chainId"}}
				if err := c.BatchCall(context.Background(), reqs); err != nil {
					t.Fatal(err)
				}
				err = reqs[1].Err
			}
			if err == nil || err.Error() != tt.want {
				t.Errorf("error %q\nwant      %q", err, tt.want)
			}
		})
	}
}
