package explore

import (
	"fmt"
	"math/bits"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/policy/retry"
	"github.com/ohmypi/retryfsm/session"
)

// key is a State packed into 32 bytes without pointers, normalised: two
// states that differ only in what the session core never reads again pack
// equal (SPEC.md §12.1). k.state() is the canonical state of its class; the
// explorer stores keys, not States (hundreds of thousands of states then
// take 32 bytes each and give the GC nothing to scan), and the key is also
// the visited-set key.
//
// What is normalised away:
//
//   - ids: timer and call ids matter only by equality, so the pending
//     timers are numbered 1..NT in queue order, the call in flight next, a
//     Ctl or CompTimer that names no pending timer after it; LastID is the
//     largest. Prompt numbers likewise: the pending prompt is 1, the
//     run's prompt 1 if it is the same one, else 2; Prompts the largest.
//   - times: the explorer gives the core At = 0, so messages' At and
//     CompAt are 0 and the "older than the latest compaction" test never
//     holds; CompDone is dropped, and so is RetryAt (get_state's
//     nextRetryAt: no input of the alphabet reads it).
//   - the context's stored replies: the core reads a stored message only
//     for the compaction check (its Overflow flag), so a reply that does
//     not overflow is kept as no message at all; Previous and BeforeLast
//     only while the last message is an assistant one (they undo its
//     drop, and the next assistant message overwrites them); tool results
//     are kept as user messages (only "assistant or not" is read); Count
//     only as none, one, or two (the last message is an assistant one).
//
// TestKeyIsACongruence checks that equal keys step alike.
//
// hdr layout (bit offsets):
//
//	0-2 Retry.State (index in policy.States())   3-10 Retry.Attempt
//	11  Retry.Open  12-14 Retry.Armed  15 Retry.Controlled
//	16  Enabled     17 ChainOpen       18-25 ChainAttempt
//	26  Pending     27 Waiting         28-29 Run.Kind   30-31 Run.Prompt code
//	32  Run.Call    33-34 Context.Last 35-36 Context.BeforeLast
//	37-40 Context.Assistant code       41-44 Context.Previous code
//	45-47 Ctl code  48-50 CompTimer code  51-53 NT  54+i timer i's Late
//	58-62 Retry.Model (the fallback model in use; 0 without retry.fallback)
//
// rem[i] is timer i's Rem (bits 0-29) and Kind (bits 30-31). Unused timers
// are zero.
type key struct {
	hdr uint64
	rem [maxTimers]uint32
	// hist is the session history (RebuildFromHistory; 0 otherwise), packed
	// as the context is: bits 0-1 Last, 2-3 BeforeLast, 4-7 Assistant
	// code, 8 Assistant is an error, 9-12 Previous code (BeforeLast,
	// Previous and the error bit only while the last message is an
	// assistant one: a rebuild reads them then only).
	hist uint32
}

// histBits is the width of key.hist (the node keeps the input above it).
const histBits = 13

// MaxMaxRetries is the largest maxRetries the state key encodes (its
// attempts and remaining waits are sized for it): no variant's
// MaxRetriesLimit exceeds it.
const MaxMaxRetries = 20

// The field widths of key: a value outside them would alias another state,
// so key refuses it rather than merge two states silently. With maxRetries
// <= MaxMaxRetries attempts stay below 2^8 and a wait's Rem (at most 2 s *
// 2^19) below 2^30.
const (
	maxKeyAttempt = 1<<8 - 1
	maxKeyArmed   = 1<<3 - 1
	// maxKeyModel is the largest Snapshot.Model the key encodes (5 bits;
	// policy.MaxFallbacks is 16).
	maxKeyModel = 1<<5 - 1
)

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// roleCode packs a role as the core reads it: none, not an assistant
// message, an assistant message.
func roleCode(r session.Role) uint64 {
	switch r {
	case session.RoleNone:
		return 0
	case session.RoleAssistant:
		return 2
	}
	return 1
}

// states is policy.States(), taken once: policy returns a copy on every
// call, which the hot paths (a key's state, a coverage unit) would
// allocate.
var states = policy.States()

var codeRole = [4]session.Role{session.RoleNone, session.RoleUser, session.RoleAssistant, session.RoleUser}

// replyCode packs a stored reply: 0 for none or one that does not
// overflow, else 1 + its index in the alphabet's outcomes.
func replyCode(o *classify.Outcome, has bool) (uint64, bool) {
	if !has || !o.Overflow {
		return 0, true
	}
	for i := range alphabet.outcomes {
		if alphabet.outcomes[i] == *o {
			return uint64(i) + 1, true
		}
	}
	return 0, false
}

func (k *key) message(code uint64) (session.Message, bool) {
	if code == 0 {
		return session.Message{}, false
	}
	return session.Message{Reply: alphabet.outcomes[code-1]}, true
}

// key packs s normalised; it panics on a state outside the widths above
// (a bug: the explorer bounds every field it packs).
func (s *State) key() key {
	ss := &s.Session
	si := ss.Retry.State.Index()
	if si < 0 || uint(ss.Retry.Attempt) > maxKeyAttempt || uint(ss.Retry.Armed) > maxKeyArmed ||
		uint16(s.ChainAttempt) > maxKeyAttempt || uint(ss.Retry.Model) > maxKeyModel || ss.Run.Kind > session.CompactionRun || s.NT > maxTimers {
		panic(fmt.Sprintf("explore: state %v does not fit the state key", *s))
	}
	w := uint64(si)
	w |= uint64(ss.Retry.Attempt) << 3
	w |= b2u(ss.Retry.Open) << 11
	w |= uint64(ss.Retry.Armed) << 12
	w |= b2u(ss.Retry.Controlled) << 15
	w |= b2u(s.Enabled) << 16
	w |= b2u(s.ChainOpen) << 17
	w |= uint64(s.ChainAttempt) << 18
	w |= b2u(ss.Pending != 0) << 26
	w |= b2u(ss.Waiting) << 27
	w |= uint64(ss.Run.Kind) << 28
	switch p := ss.Run.Prompt; {
	case p == 0:
	case p == ss.Pending:
		w |= 1 << 30
	default:
		w |= 2 << 30
	}
	w |= b2u(ss.Run.Call != 0) << 32
	c := &ss.Context
	w |= roleCode(c.Last) << 33
	a, ok := replyCode(&c.Assistant.Reply, c.HasAssistant)
	if c.Last == session.RoleAssistant {
		w |= roleCode(c.BeforeLast) << 35
		p, okp := replyCode(&c.Previous.Reply, c.HasPrevious)
		w |= p << 41
		ok = ok && okp
	}
	w |= a << 37
	h, okh := histCode(&ss.History)
	ok = ok && okh
	// Timer ids: the pending timers are 1..NT; a Ctl or CompTimer naming
	// none of them is "dangling" (5, 6, in that order).
	var dangling [2]uint64
	nd := 0
	code := func(id uint64) uint64 {
		if id == 0 {
			return 0
		}
		for i := 0; i < int(s.NT); i++ {
			if s.T[i].ID == id {
				return uint64(i) + 1
			}
		}
		for j := range nd {
			if dangling[j] == id {
				return uint64(j) + 5
			}
		}
		dangling[nd] = id
		nd++
		return uint64(nd) + 4
	}
	w |= code(ss.Ctl) << 45
	w |= code(ss.CompTimer) << 48
	w |= uint64(s.NT) << 51
	w |= uint64(ss.Retry.Model) << 58
	k := key{}
	for i := 0; i < int(s.NT); i++ {
		t := &s.T[i]
		if uint64(t.Rem) > maxRem || t.Kind == 0 || t.Kind > session.CompactionTimer {
			ok = false
		}
		w |= b2u(t.Late) << (54 + uint(i))
		k.rem[i] = uint32(t.Rem) | uint32(t.Kind)<<remBits
	}
	if !ok {
		panic(fmt.Sprintf("explore: state %v does not fit the state key", *s))
	}
	k.hdr, k.hist = w, h
	return k
}

// histCode packs the session history (see key.hist).
func histCode(c *session.Context) (uint32, bool) {
	h := uint32(roleCode(c.Last))
	a, ok := replyCode(&c.Assistant.Reply, c.HasAssistant)
	h |= uint32(a) << 4
	if c.Last == session.RoleAssistant {
		h |= uint32(roleCode(c.BeforeLast)) << 2
		if c.Assistant.Reply.StopReason == policy.StopReasonError {
			h |= 1 << 8
		}
		p, okp := replyCode(&c.Previous.Reply, c.HasPrevious)
		h |= uint32(p) << 9
		ok = ok && okp
	}
	return h, ok
}

// unpackHistory is histCode's inverse: the canonical history of h.
func (k *key) unpackHistory(h uint32) session.Context {
	var c session.Context
	c.Last = codeRole[h&3]
	switch c.Last {
	case session.RoleNone:
	case session.RoleAssistant:
		c.Count = 2
		c.BeforeLast = codeRole[h>>2&3]
		c.Previous, c.HasPrevious = k.message(uint64(h >> 9 & 15))
	default:
		c.Count = 1
	}
	c.Assistant, c.HasAssistant = k.message(uint64(h >> 4 & 15))
	if c.Last == session.RoleAssistant && h>>8&1 != 0 && !c.HasAssistant {
		// An error that does not overflow: only its stop reason is read.
		c.Assistant, c.HasAssistant = session.Message{Reply: classify.Outcome{StopReason: policy.StopReasonError}}, true
	}
	return c
}

// state unpacks k: the canonical state of its class.
func (k *key) state() State {
	w := k.hdr
	var s State
	ss := &s.Session
	ss.Retry = retry.Snapshot{
		State:      states[w&7],
		Attempt:    int(w >> 3 & 0xff),
		Open:       w>>11&1 != 0,
		Armed:      int(w >> 12 & 7),
		Controlled: w>>15&1 != 0,
		Model:      int(w >> 58 & maxKeyModel),
	}
	s.Enabled = w>>16&1 != 0
	s.ChainOpen = w>>17&1 != 0
	s.ChainAttempt = int16(w >> 18 & 0xff)
	if w>>26&1 != 0 {
		ss.Pending = 1
	}
	ss.Waiting = w>>27&1 != 0
	ss.Run.Kind = session.RunKind(w >> 28 & 3)
	switch w >> 30 & 3 {
	case 1:
		ss.Run.Prompt = 1
	case 2:
		ss.Run.Prompt = 2
	}
	ss.Prompts = max(ss.Pending, ss.Run.Prompt)
	c := &ss.Context
	c.Last = codeRole[w>>33&3]
	switch c.Last {
	case session.RoleNone:
	case session.RoleAssistant:
		c.Count = 2
		c.BeforeLast = codeRole[w>>35&3]
		c.Previous, c.HasPrevious = k.message(w >> 41 & 15)
	default:
		c.Count = 1
	}
	c.Assistant, c.HasAssistant = k.message(w >> 37 & 15)
	ss.History = k.unpackHistory(k.hist)
	s.NT = uint8(w >> 51 & 7)
	for i := 0; i < int(s.NT); i++ {
		r := k.rem[i]
		s.T[i] = Timer{Kind: session.TimerKind(r >> remBits), ID: uint64(i) + 1, Rem: int64(r & maxRem), Late: w>>(54+uint(i))&1 != 0}
	}
	next := uint64(s.NT)
	if w>>32&1 != 0 {
		next++
		ss.Run.Call = next
	}
	id := func(code uint64) uint64 {
		switch {
		case code == 0:
			return 0
		case code <= maxTimers:
			return code
		}
		return next + code - maxTimers
	}
	ss.Ctl = id(w >> 45 & 7)
	ss.CompTimer = id(w >> 48 & 7)
	ss.LastID = max(next, ss.Ctl, ss.CompTimer)
	return s
}

// tag is the high half of k's hash: the visited set's slot and tag.
func (k *key) tag() uint32 { return uint32(k.hash() >> 32) }

// hash mixes all of k (multiply and fold, as in wyhash); stateSet keeps
// the high 32 bits (tag).
func (k *key) hash() uint64 {
	const (
		m1 = 0xa0761d6478bd642f
		m2 = 0xe7037ed1a0b428db
		m3 = 0x8ebc6af09c88c6e3
	)
	hi, lo := bits.Mul64(k.hdr^m1, uint64(k.rem[0])|uint64(k.rem[1])<<32^m2)
	h := hi ^ lo
	hi, lo = bits.Mul64(h^m3, uint64(k.rem[2])|uint64(k.rem[3])<<32^m1)
	h = hi ^ lo
	if k.hist != 0 {
		hi, lo = bits.Mul64(h^m2, uint64(k.hist)^m3)
		h = hi ^ lo
	}
	return h
}
