package http

// ErrorStatus exposes the one mapping of error codes to status codes to the
// tests of package http_test.
var ErrorStatus = errorStatus

// RouteTable returns the method and pattern of every route the server
// registers, in registration order, so that the tests can hold the OpenAPI
// document against it.
func RouteTable() [][2]string {
	var out [][2]string
	for _, rt := range NewServer(Config{}).routes {
		out = append(out, [2]string{rt.method, rt.pattern})
	}
	return out
}
