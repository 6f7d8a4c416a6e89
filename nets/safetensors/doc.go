// Package safetensors reads and writes the safetensors tensor file format:
// an 8-byte little-endian header length n, n bytes of JSON header
// {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
// "__metadata__": {"key": "value"}}, then the raw little-endian tensor bytes,
// with data_offsets relative to the start of that data region.
//
// It is for: loading and saving network weights (package nets) and the small
// reference files the tests compare against. It reads F32, F16 and BF16
// tensors (the two half formats are converted to float32) and writes F32.
// It is not for: tensors larger than memory (files are read whole),
// memory-mapping, or integer tensors beyond recognising their dtype names.
//
// Parse validates everything a malicious or truncated file could get wrong
// (header length beyond the file, bad JSON, unknown dtype, shapes whose size
// does not match their byte range, overlapping or out-of-range offsets) and
// returns an error naming the tensor; it never panics. WriteFile saves
// atomically: temporary file in the same directory, fsync, rename.
//
// All functions are safe for concurrent use; a File is plain data and may be
// read by many goroutines once built.
package safetensors
