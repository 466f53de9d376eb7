package scenario

// Loading one scenario file: reading it (bounded), decoding it with the
// one strict reader (internal/strictfile) and checking it (parse.go).

import (
	"fmt"

	"github.com/ohmypi/retryfsm/internal/strictfile"
)

// Load reads and validates one scenario file (YAML or JSON).
func Load(path string) (*Scenario, error) {
	// One byte over the limit is enough for Parse to refuse the size.
	data, _, err := strictfile.ReadFile(path, maxSize)
	if err != nil {
		return nil, &Error{Pos: Pos{File: path}, Msg: err.Error(), Err: err}
	}
	return Parse(path, data)
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
