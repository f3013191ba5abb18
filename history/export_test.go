package history

// CompressForTest compresses raw as segments are, so that tests can build
// segments of a layout this package would not write.
func CompressForTest(raw []byte) []byte { return compress(nil, raw) }
