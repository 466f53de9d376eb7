package explore

import "github.com/ohmypi/retryfsm/policy"

// key is a compact, comparable encoding of a State (fast map key).
type key [3]uint64

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// MaxMaxRetries is the largest maxRetries Explore accepts (the encoding of
// attempts and remaining waits is sized for it).
const MaxMaxRetries = 20

func (s *State) key() key {
	var k key
	var sc uint64
	switch s.Snap.State { // avoid a map lookup on the hot path
	case policy.StateIdle:
		sc = 0
	case policy.StateBackoff:
		sc = 1
	case policy.StateContinuing:
		sc = 2
	case policy.StateExhausted:
		sc = 3
	case policy.StateCancelled:
		sc = 4
	default:
		sc = 5
	}
	w := sc
	w |= uint64(s.Snap.Attempt&0xff) << 3
	w |= b2u(s.Snap.Open) << 11
	w |= uint64(s.Snap.Armed&7) << 12
	w |= b2u(s.Snap.Controlled) << 15
	w |= b2u(s.Enabled) << 16
	w |= b2u(s.Started) << 17
	w |= uint64(s.Run) << 18
	w |= b2u(s.RunMsg) << 20
	w |= b2u(s.CtxAsst) << 21
	w |= b2u(s.Pending) << 22
	w |= b2u(s.Waiting) << 23
	w |= b2u(s.ChainOpen) << 24
	w |= uint64(s.ChainAttempt&0xff) << 25
	w |= uint64(s.NT) << 33
	k[0] = w
	for i := 0; i < int(s.NT); i++ {
		t := s.T[i]
		v := uint64(t.Rem)&0xfffffff | b2u(t.Late)<<28 | uint64(t.Kind)<<29 | b2u(t.Ctl)<<31
		k[1+i/2] |= v << (32 * uint(i%2))
	}
	return k
}
