package explore

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/session"
)

// What the explorer makes of the opt-in settings (SPEC.md §12.6).
const (
	// hintShortMs is the hint of reply:hint:short: shorter than the
	// backoffs of every profile, so floor leaves the backoff and replace
	// shortens the wait to it; not 1 ms, the compaction continue's
	// abstract wait.
	hintShortMs = 2
	// hintLongDefaultMs is the hint of reply:hint:long when neither
	// retryAfter.maxWaitMs nor maxHintMs bounds it: an hour.
	hintLongDefaultMs = 3_600_000
	// hintLongOverMs is how far reply:hint:long's hint exceeds
	// retryAfter.maxWaitMs.
	hintLongOverMs = 1000
)

// JitterDraw returns the draw in [0,1) the explorer gives every retryable
// reply under the jitter mode: the one that makes the longest wait (0 for
// down, the largest float64 below 1 for updown, full and equal; 0 for
// none, which takes no draw). Timers are abstract and a draw only changes
// the length of a wait, so the two ends of the range are explored: this
// one, which puts the wait-bound invariant to the hardest test, and
// ShortJitterDraw's, which reply:retryable:short-draw carries (SPEC.md
// §12.6).
func JitterDraw(mode string) float64 {
	switch mode {
	case policy.JitterUpDown, policy.JitterFull, policy.JitterEqual:
		return math.Nextafter(1, 0)
	}
	return 0
}

// ShortJitterDraw returns the draw that makes the shortest wait under the
// jitter mode (the largest float64 below 1 for down, 0 for updown, full
// and equal), which reply:retryable:short-draw carries.
func ShortJitterDraw(mode string) float64 {
	if mode == policy.JitterDown {
		return math.Nextafter(1, 0)
	}
	return 0
}

// config is one exploration's settings and what follows from them: the
// alphabet's replies and their classification under the settings, which
// inputs are in the alphabet, and the bounds of the abstraction.
type config struct {
	// set are the settings explored, normalised: Enabled true (the State
	// keeps retry.enabled), MaxRetries the exploration's.
	set policy.Settings
	// pol is set compiled, with retry.enabled false ([0]) and true ([1]).
	pol [2]*policy.Policy
	// msgs are the replies of the reply inputs, alpha their classification.
	msgs  [numInputs]replyInput
	alpha *classifiedAlphabet
	// hints: the hinted replies are in the alphabet (retryAfter.use is
	// floor or replace).
	hints bool
	// off are the inputs not in the alphabet (bit 1<<Input): the hinted
	// replies without hints, and a reply no candidate message gives its
	// class under the settings.
	off uint32
	// draw is the jitter draw of every retryable reply (JitterDraw) but
	// reply:retryable:short-draw's, shortDraw (ShortJitterDraw).
	draw, shortDraw float64
	// sat > 0 (persistent mode): the attempt counter and the chain's
	// observed attempt saturate at sat in the state (SPEC.md §12.6).
	sat int
	// waitBound is the bound of every auto_retry_start's delayMs without
	// a used hint: maxBackoffMs*(1+ratio), in ms (0: no cap, no bound).
	waitBound float64
}

// replyInput is a reply input's message and auth storage's answer.
type replyInput struct {
	msg      policy.AssistantMessage
	switched bool
}

// defaultConfigs are the configurations of the default settings, per
// maxRetries, made once.
var defaultConfigs = func() [MaxMaxRetries + 1]*config {
	var out [MaxMaxRetries + 1]*config
	for mr := range out {
		out[mr] = &config{set: policy.Settings{Enabled: true, MaxRetries: mr, BaseDelay: baseDelay}, msgs: replyOf, alpha: alphabet, off: hintInputs | 1<<ReplyRetryableShortDraw}
		out[mr].compiled(policy.MustCompile(out[mr].set))
	}
	return out
}()

// compiled keeps p, set's policy, with retry on and off.
func (c *config) compiled(p *policy.Policy) {
	c.pol = [2]*policy.Policy{p.WithEnabled(false), p.WithEnabled(true)}
}

// defaultConfig is the configuration of the default settings with
// maxRetries (which must be in 0..MaxMaxRetries).
func defaultConfig(maxRetries int) *config { return defaultConfigs[maxRetries] }

// isDefault reports whether set are the default settings (but for
// MaxRetries and Enabled) with the explorer's base delay.
func isDefault(set *policy.Settings) bool {
	d := policy.DefaultSettings()
	d.MaxRetries, d.Enabled = set.MaxRetries, set.Enabled
	d.BaseDelay = baseDelay
	return set.Equal(d)
}

// optIn reports whether set uses any opt-in setting (a key after
// baseDelayMs, SPEC.md §1).
func optIn(set *policy.Settings) bool {
	d := policy.DefaultSettings()
	d.Enabled, d.MaxRetries, d.BaseDelay = set.Enabled, set.MaxRetries, set.BaseDelay
	return !set.Equal(d)
}

// newConfig checks the settings of an exploration and works out its
// configuration: set nil is the default settings; otherwise set's
// MaxRetries is replaced by maxRetries and Enabled by true. It refuses
// settings that fail policy.Settings.Validate, opt-in settings on a
// variant other than sound unless anyVariant (the original's table has no
// rule for them; scenario files and the simulator refuse them too), and
// settings whose waits or attempts do not fit the state key.
func newConfig(v *session.Variant, set *policy.Settings, maxRetries int, anyVariant bool) (*config, error) {
	if set == nil {
		return defaultConfig(maxRetries), nil
	}
	s := set.Clone().Normalized()
	s.MaxRetries, s.Enabled = maxRetries, true
	p, err := policy.Compile(s)
	if err != nil {
		return nil, err
	}
	if isDefault(&s) {
		return defaultConfig(maxRetries), nil
	}
	if v != nil && v != session.Sound && !anyVariant && optIn(&s) {
		return nil, fmt.Errorf("variant %s takes only the default settings (maxRetries and baseDelayMs; its table has no rule for the opt-in settings)", v.Name)
	}
	c := &config{set: s, msgs: replyOf, off: hintInputs | 1<<ReplyRetryableShortDraw}
	c.compiled(p)
	cls := p.Classifier()
	c.pickMessages(cls)
	c.hints = s.RetryAfter.Use != policy.HintIgnore && c.off&(1<<ReplyRetryable) == 0
	if c.hints {
		long := float64(hintLongDefaultMs)
		if s.RetryAfter.MaxWait > 0 {
			long = math.Ceil(msOf(s.RetryAfter.MaxWait)) + hintLongOverMs
		}
		if s.RetryAfter.MaxHint > 0 && long > msOf(s.RetryAfter.MaxHint) {
			long = math.Floor(msOf(s.RetryAfter.MaxHint))
		}
		for in, ms := range map[Input]float64{ReplyHintLong: long, ReplyHintShort: hintShortMs} {
			c.msgs[in] = hintReply(c.msgs[ReplyRetryable].msg.ErrorMessage, ms)
			if o := cls.Reply(c.msgs[in].msg, contextWindow, epoch); o.Class == classify.ClassRetryable && !o.UsageLimit && o.HasWaitHint {
				c.off &^= 1 << in
			} else {
				c.msgs[in] = replyInput{}
			}
		}
	}
	if s.Jittered() {
		c.draw, c.shortDraw = JitterDraw(s.Jitter.Mode), ShortJitterDraw(s.Jitter.Mode)
		if c.off&(1<<ReplyRetryable) == 0 { // both ends of the range
			c.msgs[ReplyRetryableShortDraw] = c.msgs[ReplyRetryable]
			c.off &^= 1 << ReplyRetryableShortDraw
		}
	}
	if s.MaxBackoff > 0 {
		c.waitBound = msOf(s.MaxBackoff) * (1 + s.Jitter.Ratio)
	}
	// Persistent mode: from attempt sat on, neither the count (usage
	// limits stop at maxRetries) nor the wait (capped) changes.
	top := maxRetries
	if s.Persistent {
		capAt := 1 // the first attempt whose backoff is the cap
		for s.BackoffFactor != 1 && s.Delay(capAt) < s.MaxBackoff {
			if capAt++; capAt >= maxKeyAttempt {
				return nil, fmt.Errorf("persistent: the backoff reaches maxBackoffMs only after attempt %d; the explorer encodes attempts up to %d", maxKeyAttempt-1, maxKeyAttempt-1)
			}
		}
		c.sat = max(maxRetries, capAt-1, 1)
		top = c.sat + 1
	}
	for k := 1; k <= top; k++ {
		if w := s.Backoff(k, c.draw); w.Milliseconds() > maxRem {
			return nil, fmt.Errorf("the backoff of attempt %d (%v) exceeds the longest wait the explorer encodes (%d ms): lower maxRetries or set maxBackoffMs", k, w, maxRem)
		}
	}
	c.alpha, err = classifyAlphabet(cls, &c.msgs, c.draw, c.shortDraw, s.Jittered(), alphabet)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// msOf is d in milliseconds.
func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// hintReply is the retryable error msg asking for a wait of ms (whole).
func hintReply(msg string, ms float64) replyInput {
	return replyInput{msg: policy.AssistantMessage{StopReason: policy.StopReasonError,
		ErrorMessage: msg + ", retry-after-ms=" + strconv.FormatFloat(ms, 'f', 0, 64)}}
}

// hintInputs are the hinted replies.
const hintInputs = 1<<ReplyHintLong | 1<<ReplyHintShort

// epoch is the time the explorer's replies are classified at (the
// alphabet has no date hint).
var epoch = time.UnixMilli(0).UTC()

// candidates are the messages tried, in order, for the error replies
// whose class the classification settings decide: the first that has the
// reply's class under the settings is its message (the first is the
// default alphabet's). A profile's patterns can make a message retryable
// or not (codex retries every error but quota and usage limits).
var candidates = [numInputs][]string{
	ReplyRetryable:        {MsgRetryable, "503 service unavailable", "fetch failed"},
	ReplyFatal:            {MsgFatal, "insufficient_quota", "401 unauthorized"},
	ReplyUsageLimitSwitch: {MsgUsageLimit, "rate_limit_reached", "usage_limit_reached"},
	ReplyUsageLimitStay:   {MsgUsageLimit, "rate_limit_reached", "usage_limit_reached"},
}

// classWanted reports whether o has the class of the reply input in.
func classWanted(in Input, o *classify.Outcome) bool {
	switch in {
	case ReplyFatal:
		return o.Class == classify.ClassFatal
	case ReplyUsageLimitSwitch, ReplyUsageLimitStay:
		return o.Class == classify.ClassRetryable && o.UsageLimit
	}
	return o.Class == classify.ClassRetryable && !o.UsageLimit && !o.HasWaitHint
}

// pickMessages gives each error reply of candidates the first message
// that has its class under cls; a reply none gives it leaves the
// alphabet (c.off).
func (c *config) pickMessages(cls *classify.Classifier) {
	for in := range candidates {
		if len(candidates[in]) == 0 {
			continue
		}
		c.off |= 1 << in
		for _, m := range candidates[in] {
			msg := policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: m}
			if o := cls.Reply(msg, contextWindow, epoch); classWanted(Input(in), &o) {
				c.msgs[in].msg, c.off = msg, c.off&^(1<<in)
				break
			}
		}
		if c.off&(1<<in) != 0 {
			c.msgs[in] = replyInput{}
		}
	}
}

// saturate lowers the attempt counter and the chain's observed attempt to
// c.sat in persistent mode (part of the state's normalisation).
func (c *config) saturate(s *State) {
	if c.sat == 0 {
		return
	}
	if s.Session.Retry.Attempt > c.sat {
		s.Session.Retry.Attempt = c.sat
	}
	if int(s.ChainAttempt) > c.sat {
		s.ChainAttempt = int16(c.sat)
	}
}

// ValidateSettings reports why the explorer cannot explore v with the
// retry settings set and maxRetries (see Options.Settings), or nil: a
// maxRetries outside the variant's range (a *MaxRetriesError), settings
// that fail policy.Settings.Validate, opt-in settings on a variant other
// than sound, or waits and attempts beyond what the state key encodes.
// set nil is the default settings.
func ValidateSettings(v *session.Variant, set *policy.Settings, maxRetries int) error {
	if err := ValidateMaxRetries(v, maxRetries); err != nil {
		return err
	}
	_, err := newConfig(v, set, maxRetries, false)
	return err
}
