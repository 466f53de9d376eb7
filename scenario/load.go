package scenario

// Loading one scenario file: reading it (bounded), decoding it with the
// one strict reader (internal/strictfile) and checking it (parse.go).

import (
	"fmt"
	"io"
	"os"

	"github.com/ohmypi/retryfsm/internal/strictfile"
)

// Load reads and validates one scenario file (YAML or JSON).
func Load(path string) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Pos: Pos{File: path}, Msg: err.Error(), Err: err}
	}
	defer f.Close()
	// Read in one go when the size is known (it is for a regular file),
	// never more than the limit plus one byte.
	size := 512
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = int(min(fi.Size(), maxSize)) + 1
	}
	data, err := readAtMost(f, size, maxSize+1)
	if err != nil {
		return nil, &Error{Pos: Pos{File: path}, Msg: err.Error(), Err: err}
	}
	return Parse(path, data)
}

// readAtMost reads r to its end or to limit bytes, whichever is first,
// into a buffer first sized hint.
func readAtMost(r io.Reader, hint, limit int) ([]byte, error) {
	b := make([]byte, 0, hint)
	for len(b) < limit {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):min(cap(b), limit)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// Parse reads and validates one scenario from data; name is the
// file name used in error positions, Scenario.Path and the default Name.
// A name ending in ".json" is read as JSON, any other as YAML.
func Parse(name string, data []byte) (*Scenario, error) {
	p := &parser{strictfile.Reader{File: name, What: "scenario"}}
	var sc *Scenario
	if err := p.Read(func() {
		if len(data) > maxSize {
			p.failAt(Pos{File: name}, "", fmt.Sprintf("file is larger than %d bytes", maxSize))
		}
		root := p.Decode(data)
		if scnTestHook != nil {
			scnTestHook()
		}
		sc = p.scenario(root)
	}); err != nil {
		return nil, &Error{Pos: Pos(err.Pos), Field: err.Field, Msg: err.Msg, Err: err.Err}
	}
	return sc, nil
}

// scnTestHook (named so in the tests), when set (by tests only), runs inside Parse after the file
// is decoded.
var scnTestHook func()
