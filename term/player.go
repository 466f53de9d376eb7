package term

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/sim"
	"github.com/ohmypi/retryfsm/trace"
)

// ErrInterrupted is returned by Play when a signal other than os.Interrupt
// (SIGTERM, SIGHUP) arrives: the play is abandoned at once.
var ErrInterrupted = errors.New("term: interrupted")

// Timing of the player.
const (
	// FrameInterval is the loader's redraw interval (its spinner frame
	// and countdown).
	FrameInterval = 80 * time.Millisecond
	// idleHorizon: once nothing live can happen (no run in flight, no
	// backoff, every scripted action done), a wait longer than this for
	// the next queued event (a timer made inert by a cancel, an aborted
	// call's) is skipped instead of sat through.
	idleHorizon = time.Second
)

// spinner is the loader's spinner, as the original's Loader draws it.
var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// ANSI sequences of the terminal mode.
const (
	clearLine  = "\r\x1b[2K"
	hideCursor = "\x1b[?25l"
	showCursor = "\x1b[?25h"
	warning    = "\x1b[33m" // the spinner (the theme's "warning")
	muted      = "\x1b[90m" // the loader text (the theme's "muted")
	errorColor = "\x1b[31m"
	reset      = "\x1b[0m"
)

// Config configures Play.
type Config struct {
	// Scenario is played as "retrysim run" would run it (initial prompt,
	// actions, expectations), on the real clock. Required.
	Scenario *scenario.Scenario
	// Variant overrides the scenario's policy variant when not empty.
	Variant string
	// Out receives the trace lines as text (FormatLine), the original's
	// "Retry failed after ..." errors and, with Terminal, the loader.
	Out io.Writer
	// Terminal draws the loader during a backoff (with ANSI sequences) and
	// reads key presses from Keys: Esc cancels the retry while the loader
	// is shown. Without it the same lines are printed, with no loader and
	// no colours, and Keys is not read.
	Terminal bool
	// Keys is the terminal's input, in key mode (see KeyMode); nil reads
	// nothing. It is read by a goroutine that ends when Keys returns an
	// error (io.EOF included), which may be after Play returned.
	Keys io.Reader
	// Interrupt delivers signals (for example from signal.Notify): an
	// os.Interrupt (Ctrl-C) cancels the play as Esc does, with the "abort"
	// command (see Result.Cancelled); any other signal (SIGTERM, SIGHUP)
	// makes Play return ErrInterrupted at once. Play ends its terminal
	// output (loader cleared, cursor shown) before it returns. Ctrl-C read
	// from Keys counts as os.Interrupt.
	Interrupt <-chan os.Signal
	// Clock is the wall clock (default: the system clock).
	Clock clock.Clock
	// Width, when positive, is the number of columns every line Play
	// writes fits in (characters counted): trace lines in
	// FormatLineWidth's layout, the retry failure texts wrapped (Wrap).
	// 0 writes FormatLine's lines, whatever their length.
	Width int
}

// Result is what Play reports: the run's result, as sim.RunScenario's
// (trace, records, final state, the expectations checked), and whether
// the user cancelled the play.
type Result struct {
	*sim.Result
	// Cancelled is the command the user's cancel sent: "abort_retry" for
	// Esc while the loader was shown, "abort" for Ctrl-C; "" when the
	// scenario ran to quiescence. A cancelled play ends at the instant of
	// the cancel, once what the command causes at that instant is done:
	// the rest of the script is not played, and the final line's time is
	// CancelledAt. Its expectations are checked all the same, on the
	// lines written up to then (Failures).
	Cancelled string
	// CancelledAt is the virtual time of the cancel.
	CancelledAt time.Duration
}

// Play runs the scenario on the real clock until it is quiescent, or
// until the user cancels it (Esc while the loader is shown, Ctrl-C: see
// Result.Cancelled), then writes the final line and checks its
// expectations, like sim.RunScenario. It returns an error when the
// scenario cannot run (an unknown variant, invalid settings),
// ErrInterrupted on a signal other than os.Interrupt, ctx.Err() when ctx
// is done, or the error of a failed write.
func Play(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Scenario == nil || cfg.Out == nil {
		return nil, errors.New("term: Config.Scenario and Config.Out are required")
	}
	p := &player{cfg: cfg, out: bufio.NewWriter(cfg.Out)}
	sess, err := sim.NewSession(cfg.Scenario, sim.Options{Variant: cfg.Variant, Sink: p})
	if err != nil {
		return nil, err
	}
	p.sess, p.sched = sess, sess.Scheduler()
	for _, a := range cfg.Scenario.Actions {
		p.lastAction = max(p.lastAction, a.At)
	}
	p.rt = sim.NewRealTime(p.sched, cfg.Clock)
	defer p.rt.Stop()

	var keys chan []byte
	if cfg.Terminal && cfg.Keys != nil {
		keys = make(chan []byte)
		done := make(chan struct{})
		defer close(done)
		go readKeys(cfg.Keys, keys, done)
	}

	sess.Start()
	var runErr error
	for p.cancelled == "" {
		if runErr = p.rt.RunDue(); runErr != nil {
			break
		}
		if sess.Quiescent() {
			break
		}
		if p.idle() {
			if at, ok := p.sched.NextAt(); ok && at-p.rt.Now() > idleHorizon {
				p.rt.Jump(at)
				continue
			}
		}
		var limit time.Duration
		if p.loaderShown() {
			limit = FrameInterval
		}
		wake := p.rt.Wake(limit)
		if err := p.render(); err != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			p.endTerminal()
			return nil, ctx.Err()
		case <-wake:
		case k, ok := <-keys:
			if !ok {
				keys = nil
				continue
			}
			switch esc, intr := parseKeys(k); {
			case intr:
				runErr = p.cancel("abort")
			case esc && p.loaderShown():
				runErr = p.cancel("abort_retry")
			}
		case sig := <-cfg.Interrupt:
			if sig != os.Interrupt { // SIGTERM, SIGHUP: at once
				p.endTerminal()
				return nil, ErrInterrupted
			}
			runErr = p.cancel("abort")
		}
		if runErr != nil {
			break
		}
	}
	p.loader = false
	res := &sim.Result{Scenario: cfg.Scenario, Variant: sess.Variant().Name, RunErr: runErr}
	res.Final = sess.Final()
	if runErr == nil {
		sess.WriteFinal()
	}
	if err := p.render(); err != nil {
		return nil, err
	}
	if err := p.endTerminal(); err != nil {
		return nil, err
	}
	res.Trace, res.Records = sess.Trace().Bytes(), p.records
	if runErr != nil {
		res.Failures = []string{fmt.Sprintf("%s: simulation stopped at t=%dms: %v",
			scenarioName(cfg.Scenario), res.Final.At.Milliseconds(), runErr)}
	} else {
		res.Failures = sim.CheckExpect(cfg.Scenario, p.records, res.Final)
	}
	return &Result{Result: res, Cancelled: p.cancelled, CancelledAt: p.cancelledAt}, nil
}

func scenarioName(sc *scenario.Scenario) string {
	if sc.Path != "" {
		return sc.Path
	}
	return sc.Name
}

type player struct {
	cfg        Config
	sess       *sim.Session
	sched      *sim.Scheduler
	rt         *sim.RealTime
	out        *bufio.Writer
	lastAction time.Duration
	running    bool // an agent run is in flight (from the trace)

	cancelled   string        // the command of the user's cancel, "" before
	cancelledAt time.Duration // its virtual time

	// The loader, shown from auto_retry_start to auto_retry_end or the
	// start of the retried run.
	loader      bool
	attempt     int
	maxAttempts int
	deadline    time.Duration // virtual time the backoff ends
	drawn       bool          // the loader line is on the screen
	cursorOff   bool

	records []trace.Record // every record, for the expectations
	line    []byte         // the JSON of the record being printed
}

func (p *player) loaderShown() bool { return p.loader && p.cfg.Terminal }

// idle reports that nothing live can happen any more: no run in flight,
// no backoff, every scripted action done. What may still be queued is a
// timer made inert by a cancel or an abort, or a compaction's continue.
func (p *player) idle() bool {
	return p.sched.Elapsed() >= p.lastAction && !p.running &&
		p.sess.Snapshot().State != policy.StateBackoff
}

// cancel is the user's cancel (Esc: abort_retry, Ctrl-C: abort): the
// command runs now, as a scheduler event after those due before it, then
// what it makes due at the same instant; the play then ends there, the
// rest of the queue not played (a cancelled backoff's timer, the rest of
// the script).
func (p *player) cancel(do string) error {
	at := p.rt.Now()
	p.sched.At(at, func() { p.sess.Do(scenario.Action{Do: do}) })
	p.cancelled, p.cancelledAt = do, at
	return p.sched.Advance(at)
}

// Record prints every trace record as it is written (trace.Sink), keeps
// it for the expectations and follows the loader's state.
func (p *player) Record(r *trace.Record) {
	p.records = append(p.records, r.Clean())
	p.clearLoader()
	p.line = trace.AppendJSON(p.line[:0], r)
	p.out.WriteString(FormatLineWidth(p.line, p.cfg.Width))
	p.out.WriteByte('\n')
	switch r.Type {
	case trace.AgentRun:
		p.running = true
		p.loader = false
	case trace.AgentRunEnd:
		p.running = false
	case trace.AutoRetryStart:
		p.loader = true
		p.attempt, p.maxAttempts = r.Start.Attempt, r.Start.MaxAttempts
		p.deadline = r.T + time.Duration(r.Start.DelayMs*float64(time.Millisecond))
	case trace.AutoRetryEnd:
		p.loader = false
		if !r.End.Success {
			text := Wrap(RetryFailedText(r.End.Attempt, r.End.FinalError), p.cfg.Width, 2)
			if p.cfg.Terminal {
				text = errorColor + text + reset
			}
			p.out.WriteString(text)
			p.out.WriteByte('\n')
		}
	}
}

func (p *player) clearLoader() {
	if p.drawn {
		p.out.WriteString(clearLine)
		p.drawn = false
	}
}

// render draws the loader when it is shown (or clears it) and flushes.
func (p *player) render() error {
	if p.loaderShown() {
		// Whole milliseconds left, rounded up: right after auto_retry_start
		// the text is the original's (delayMs 1500 shows 2s).
		remaining := (max(p.deadline-p.rt.Now(), 0) + time.Millisecond - 1) / time.Millisecond
		frame := spinner[int(p.rt.Now()/FrameInterval)%len(spinner)]
		if !p.cursorOff {
			p.out.WriteString(hideCursor)
			p.cursorOff = true
		}
		p.out.WriteString(clearLine + warning + frame + reset + " " + muted +
			RetryingText(p.attempt, p.maxAttempts, int64(remaining)) + reset)
		p.drawn = true
	} else {
		p.clearLoader()
		if p.cursorOff {
			p.out.WriteString(showCursor)
			p.cursorOff = false
		}
	}
	return p.out.Flush()
}

// endTerminal leaves the screen clean: no loader, the cursor shown.
func (p *player) endTerminal() error {
	p.loader = false
	return p.render()
}

// readKeys sends what is read from r to keys until r fails or done is
// closed; it closes keys when r fails.
func readKeys(r io.Reader, keys chan<- []byte, done <-chan struct{}) {
	buf := make([]byte, 256)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			select {
			case keys <- slices.Clone(buf[:n]):
			case <-done:
				return
			}
		}
		if err != nil {
			select {
			case <-done:
			default:
				close(keys)
			}
			return
		}
	}
}

// parseKeys reads one chunk of terminal input: esc is a lone Esc key (not
// the start of an escape sequence such as an arrow key's "\x1b[A"), intr
// a Ctrl-C byte (seen when the terminal does not turn it into SIGINT).
func parseKeys(b []byte) (esc, intr bool) {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case 0x03:
			intr = true
		case 0x1b:
			if i+1 < len(b) && (b[i+1] == '[' || b[i+1] == 'O') {
				// CSI or SS3 sequence: skip to its final byte.
				i += 2
				for i < len(b) && !(b[i] >= 0x40 && b[i] <= 0x7e) {
					i++
				}
				continue
			}
			if i+1 < len(b) && b[i+1] == 0x1b {
				continue // the first of two Escs (the second is read next)
			}
			esc = true
		}
	}
	return esc, intr
}
