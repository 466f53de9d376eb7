package explore

import (
	"fmt"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/session"
)

// Invariant is one checked property.
type Invariant uint8

// The invariants, in report order.
const (
	// InvOverflowNotRetried: no auto_retry_start is caused by an overflow reply.
	InvOverflowNotRetried Invariant = iota
	// InvAttemptZero: the attempt counter is 0 whenever no chain is open
	// (isRetrying false) and after every step whose last retry event is
	// an auto_retry_end.
	InvAttemptZero
	// InvStartAttempts: every auto_retry_start has 1 <= attempt <=
	// maxRetries (no upper bound in persistent mode but for usage limits;
	// 1 after a fallback whatever maxRetries), attempt 1 opens a chain and
	// attempts are consecutive within it, restarting at 1 only right after
	// a retry_fallback, which its auto_retry_start follows in the same
	// step.
	InvStartAttempts
	// InvEndInChain: no auto_retry_end outside a chain, except the
	// maxRetries-0 end {success:false, attempt:0} and the fail-fast end
	// {success:false, attempt:1}; an end inside a chain reports the chain's
	// attempt (a fail-fast end the next one, the retry it did not make).
	InvEndInChain
	// InvChainEnds: at quiescence no chain is open (every chain that starts
	// ends).
	InvChainEnds
	// InvDisabledNoStart: with retry disabled no chain starts.
	InvDisabledNoStart
	// InvPromptResolves: at quiescence (no timer, no run in flight) no
	// prompt is unresolved.
	InvPromptResolves
	// InvWaitBound: with maxBackoffMs > 0, no auto_retry_start's delayMs
	// exceeds maxBackoffMs*(1+jitter.ratio), unless the reply's hint asks
	// for more and retryAfter.use (floor or replace) and maxHintMs let it.
	InvWaitBound
	// InvCompactionContinues: right after a successful overflow compaction
	// (willRetry) the context does not end with an assistant message, so
	// the continue 100 ms later can start (the original's hazard
	// H19_compaction_continue_rejected: the context rebuilt from the
	// session history ends with an error the retry path had removed).
	InvCompactionContinues
	numInvariants
)

var invariantNames = [numInvariants]string{
	"overflow-not-retried", "attempt-zero-outside-chain", "start-attempts", "end-in-chain",
	"chain-ends", "disabled-no-start", "prompt-resolves", "wait-bound", "compaction-continues",
}

var invariantText = [numInvariants]string{
	"no auto_retry_start is caused by an overflow reply",
	"attempt is 0 whenever no chain is open and right after every auto_retry_end (the counter is stale)",
	"every auto_retry_start has 1 <= attempt <= maxRetries (persistent: unbounded but for usage limits), consecutive within its chain, restarting at 1 only right after retry_fallback",
	"no auto_retry_end outside a chain (except the maxRetries-0 end with attempt 0 and the fail-fast end with attempt 1), and an end reports its chain's attempt (fail-fast: the next)",
	"every chain that starts ends: no chain is open at quiescence (a chain can be left open)",
	"with retry disabled no chain starts",
	"at quiescence (no timer, no run in flight) no prompt is unresolved (a prompt never resolves)",
	"no wait exceeds maxBackoffMs*(1+jitter.ratio) unless a hint used by floor or replace asks for more",
	"after a successful overflow compaction the context does not end with an assistant message, so its continue can start (H19_compaction_continue_rejected)",
}

// String returns the invariant's name, e.g. "chain-ends".
func (i Invariant) String() string { return invariantNames[i] }

// Description says what the invariant requires.
func (i Invariant) Description() string { return invariantText[i] }

// Invariants lists every invariant in report order.
func Invariants() []Invariant {
	out := make([]Invariant, numInvariants)
	for i := range out {
		out[i] = Invariant(i)
	}
	return out
}

// Options configure one exploration.
type Options struct {
	Variant    *session.Variant // default session.Sound
	MaxRetries int
	// Settings are the retry settings explored (nil: the default settings
	// with baseDelayMs 2000), e.g. a profile's (policy.ProfileByName).
	// Their MaxRetries is replaced by MaxRetries, and retry starts enabled
	// (the alphabet switches it). They must pass policy.Settings.Validate;
	// a variant other than sound takes no opt-in setting (a key after
	// baseDelayMs). SPEC.md §12.6 says how the explorer abstracts them.
	Settings *policy.Settings
	// without removes inputs from the alphabet (bit 1<<Input), for tests
	// that compare with an explorer whose alphabet lacked them.
	without uint32
	// anyVariant lets tests explore opt-in settings on a variant other
	// than sound (a broken one, to plant a violation).
	anyVariant bool
}

// Violation is one violated invariant with its shortest counterexample.
type Violation struct {
	Invariant Invariant
	Path      []Input // from the initial state; the violation happens at its last input
	Detail    string
}

// Unit is one coverage unit: a declared rule row of the table and one of its
// from-states.
type Unit struct {
	Rule int // index in the variant's table (session.Variant.Retry.Rules)
	From policy.State
}

// Result of one exploration.
type Result struct {
	Variant     string
	MaxRetries  int
	Settings    policy.Settings // the settings explored (normalised; MaxRetries set)
	States      int             // reachable abstract states
	Transitions int             // (state, enabled input) pairs explored
	// Pruned counts transitions dropped because they needed more than
	// the explorer's timer bounds (SPEC.md §12.1); 0 in sound.
	Pruned     int
	Violations []Violation // one per violated invariant, in Invariants order
	// Reached lists the (rule, from-state) units some transition fired
	// (from the trace's transition records: ignored rules write none).
	Reached map[Unit]bool

	nodes [][]node // the states and the BFS tree (see stateSet)
}

// Violated reports whether any invariant failed.
func (r *Result) Violated() bool { return len(r.Violations) > 0 }

// PathTo returns the shortest input path (BFS tree, fixed input order) from
// the initial state to state number i.
func (r *Result) PathTo(i int) []Input { return pathTo(r.nodes, i) }

func pathTo(nodes [][]node, i int) []Input {
	var p []Input
	for i > 0 {
		n := &nodes[i>>chunkBits][i&(chunkLen-1)]
		p = append(p, n.via())
		i = int(n.parent)
	}
	for a, b := 0, len(p)-1; a < b; a, b = a+1, b-1 {
		p[a], p[b] = p[b], p[a]
	}
	return p
}

// State returns reachable state number i (0 is the initial state).
func (r *Result) State(i int) State {
	k := r.nodes[i>>chunkBits][i&(chunkLen-1)].key()
	return k.state()
}

// Explore explores every reachable state breadth-first, applying every
// enabled input of every state in the fixed input order, and checks the
// invariants. The first violation found of each invariant has a shortest
// path, ties broken by the input order, so the result is deterministic
// (whatever the number of CPUs: see bfs).
//
// A maxRetries outside 0..MaxRetriesLimit(opt.Variant) is refused with an
// error wrapping a *MaxRetriesError, and settings the explorer cannot take
// (see Options.Settings) with an error saying why, before exploring
// anything.
func Explore(opt Options) (*Result, error) {
	if err := ValidateMaxRetries(opt.Variant, opt.MaxRetries); err != nil {
		return nil, fmt.Errorf("explore: %w", err)
	}
	c, err := newConfig(opt.Variant, opt.Settings, opt.MaxRetries, opt.anyVariant)
	if err != nil {
		return nil, fmt.Errorf("explore: settings: %w", err)
	}
	return exploreConfig(opt, c), nil
}

// exploreAll is Explore for a validated opt.MaxRetries and the default
// settings.
func exploreAll(opt Options) *Result { return exploreConfig(opt, defaultConfig(opt.MaxRetries)) }

// exploreConfig is Explore for a validated opt.MaxRetries and c, the
// configuration of opt.Settings.
func exploreConfig(opt Options, c *config) *Result {
	v := opt.Variant
	if v == nil {
		v = session.Sound
	}
	r := &Result{Variant: v.Name, MaxRetries: opt.MaxRetries, Settings: c.set.Clone(), Reached: map[Unit]bool{}}
	b := &bfs{v: v, opt: opt, cfg: c, r: r}
	b.run()
	return r
}

func sortViolations(vs []Violation) {
	for i := 1; i < len(vs); i++ {
		for j := i; j > 0 && vs[j].Invariant < vs[j-1].Invariant; j-- {
			vs[j], vs[j-1] = vs[j-1], vs[j]
		}
	}
}

// checkState checks the per-state invariants of a newly reached state.
func checkState(t *State) invSet {
	var fails invSet
	r := &t.Session.Retry
	if !r.Open && r.Attempt != 0 {
		fails |= 1 << InvAttemptZero
	}
	if t.Quiescent() {
		if t.ChainOpen || r.Open {
			fails |= 1 << InvChainEnds
		}
		if t.Session.Pending != 0 {
			fails |= 1 << InvPromptResolves
		}
	}
	return fails
}

// String renders the violation as "invariant: path", the path being the
// inputs from the initial state (Detail is not included).
func (v Violation) String() string {
	return fmt.Sprintf("%s: %v", v.Invariant, v.Path)
}
