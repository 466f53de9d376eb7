package sim

import (
	"fmt"

	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/trace"
)

// Result of running one scenario.
type Result struct {
	Scenario *scenario.Scenario
	Variant  string // the variant that ran (the override, or the scenario's)
	Trace    []byte // the JSON Lines trace, final line included (empty with Options.NoJSON)
	// Records are the trace's records, final line included.
	Records []trace.Record
	Final   Final
	// Failures lists the unmet expectations, each "file:line:col: what",
	// in the order of the expect block (events, then final). A simulation
	// that did not reach quiescence adds a failure too (see RunErr).
	Failures []string
	// RunErr is set when the simulation stopped before quiescence
	// (ErrTooManyEvents); Trace then holds the lines written so far and
	// the expectations are not checked.
	RunErr error
}

// Passed reports whether the scenario ran to quiescence and met every
// expectation.
func (r *Result) Passed() bool { return r.RunErr == nil && len(r.Failures) == 0 }

// RunScenario runs sc to quiescence (NewSession, Run) and checks its expect
// block. It returns an error only when the scenario cannot be run at all:
// an unknown variant (a *scenario.Error for the scenario's own "variant", a
// plain error for opt.Variant) or invalid settings. A simulation that does
// not finish is reported in the Result (RunErr and a failure), not as an
// error.
func RunScenario(sc *scenario.Scenario, opt Options) (*Result, error) {
	name := sc.Variant
	if opt.Variant != "" {
		name = opt.Variant
	}
	if _, err := session.VariantByName(name); err != nil {
		if opt.Variant != "" {
			return nil, err
		}
		return nil, &scenario.Error{Pos: scenario.Pos{File: sc.Path}, Field: "variant", Msg: err.Error(), Err: err}
	}
	// About six records per turn or action; sized up front, not grown by
	// doubling (a record is a few hundred bytes).
	records := make([]trace.Record, 0, min(8+6*(len(sc.Turns)+len(sc.Actions)), 256))
	user := opt.Sink
	opt.Sink = trace.SinkFunc(func(r *trace.Record) {
		records = append(records, r.Clean())
		if user != nil {
			user.Record(r)
		}
	})
	s, err := NewSession(sc, opt)
	if err != nil {
		return nil, &scenario.Error{Pos: scenario.Pos{File: sc.Path}, Msg: err.Error(), Err: err}
	}
	f, runErr := s.Run()
	res := &Result{
		Scenario: sc,
		Variant:  s.Variant().Name,
		Trace:    s.Trace().Bytes(),
		Records:  records,
		Final:    f,
		RunErr:   runErr,
	}
	if runErr != nil {
		res.Failures = []string{fmt.Sprintf("%s: simulation stopped at t=%dms: %v",
			resPos(sc, scenario.Pos{}), f.At.Milliseconds(), runErr)}
		return res, nil
	}
	res.Failures = CheckExpect(sc, res.Records, f)
	return res, nil
}

// resPos renders p, falling back to the scenario's file when p has no
// file name (a scenario.Scenario built in code).
func resPos(sc *scenario.Scenario, p scenario.Pos) string {
	if p.File == "" && sc != nil {
		p.File = sc.Path
	}
	if s := p.String(); s != "" {
		return s
	}
	if sc != nil && sc.Name != "" {
		return sc.Name
	}
	return "scenario"
}
