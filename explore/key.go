package explore

import (
	"fmt"
	"math/bits"

	"github.com/ohmypi/retryfsm/policy"
)

// key is a State packed into 24 bytes without pointers. It is lossless
// (k.state() == s for k = s.key(), for every state the model can reach), so
// the explorer stores keys instead of States: the hundreds of thousands of
// states of a large exploration then take 24 bytes each instead of 160 and
// give the GC nothing to scan, and the key is also the visited-set key.
//
// hdr layout (bit offsets):
//
//	0-2 Snap.State (index in policy.States)   3-10 Snap.Attempt
//	11  Snap.Open   12-14 Snap.Armed   15 Snap.Controlled
//	16  Enabled     17 Started         18-19 Run   20 RunMsg
//	21  CtxAsst     22 Pending         23 Waiting  24 ChainOpen
//	25-32 ChainAttempt                 33-35 NT
//	36+4i timer i: Kind (2 bits), Ctl, Late
//
// rem[i] is timer i's Rem. Unused timers are zero, as State keeps them.
type key struct {
	hdr uint64
	rem [maxTimers]uint32
}

// MaxMaxRetries is the largest maxRetries the state key encodes (its
// attempts and remaining waits are sized for it): no variant's
// MaxRetriesLimit exceeds it.
const MaxMaxRetries = 20

// The field widths of key: a value outside them would alias another state,
// so encode refuses it rather than merge two states silently. With
// maxRetries <= MaxMaxRetries attempts stay below 2^8 and a wait's Rem
// (at most 2 s * 2^19) below 2^32.
const (
	maxKeyAttempt = 1<<8 - 1
	maxKeyArmed   = 1<<3 - 1
	maxKeyRem     = 1<<32 - 1
)

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// key packs s; it panics on a state outside the widths above.
func (s *State) key() key {
	si := s.Snap.State.Index()
	if si < 0 || uint(s.Snap.Attempt) > maxKeyAttempt || uint(s.Snap.Armed) > maxKeyArmed ||
		uint16(s.ChainAttempt) > maxKeyAttempt || s.Run > RunCompaction || s.NT > maxTimers {
		panic(fmt.Sprintf("explore: state %v does not fit the state key", *s))
	}
	w := uint64(si)
	w |= uint64(s.Snap.Attempt) << 3
	w |= b2u(s.Snap.Open) << 11
	w |= uint64(s.Snap.Armed) << 12
	w |= b2u(s.Snap.Controlled) << 15
	w |= b2u(s.Enabled) << 16
	w |= b2u(s.Started) << 17
	w |= uint64(s.Run) << 18
	w |= b2u(s.RunMsg) << 20
	w |= b2u(s.CtxAsst) << 21
	w |= b2u(s.Pending) << 22
	w |= b2u(s.Waiting) << 23
	w |= b2u(s.ChainOpen) << 24
	w |= uint64(s.ChainAttempt) << 25
	w |= uint64(s.NT) << 33
	k := key{}
	for i := 0; i < int(s.NT); i++ {
		t := &s.T[i]
		if uint64(t.Rem) > maxKeyRem || t.Kind > TimerCompaction {
			panic(fmt.Sprintf("explore: state %v does not fit the state key", *s))
		}
		w |= (uint64(t.Kind) | b2u(t.Ctl)<<2 | b2u(t.Late)<<3) << (36 + 4*uint(i))
		k.rem[i] = uint32(t.Rem)
	}
	k.hdr = w
	return k
}

// state unpacks k (the inverse of State.key).
func (k *key) state() State {
	w := k.hdr
	s := State{
		Snap: policy.Snapshot{
			State:      policy.States[w&7],
			Attempt:    int(w >> 3 & 0xff),
			Open:       w>>11&1 != 0,
			Armed:      int(w >> 12 & 7),
			Controlled: w>>15&1 != 0,
		},
		Enabled:      w>>16&1 != 0,
		Started:      w>>17&1 != 0,
		Run:          RunKind(w >> 18 & 3),
		RunMsg:       w>>20&1 != 0,
		CtxAsst:      w>>21&1 != 0,
		Pending:      w>>22&1 != 0,
		Waiting:      w>>23&1 != 0,
		ChainOpen:    w>>24&1 != 0,
		ChainAttempt: int16(w >> 25 & 0xff),
		NT:           uint8(w >> 33 & 7),
	}
	for i := 0; i < int(s.NT); i++ {
		f := w >> (36 + 4*uint(i))
		s.T[i] = Timer{Kind: TimerKind(f & 3), Ctl: f>>2&1 != 0, Late: f>>3&1 != 0, Rem: int64(k.rem[i])}
	}
	return s
}

// hash mixes all of k (multiply and fold, as in wyhash); stateSet keeps
// the high 32 bits.
func (k *key) hash() uint64 {
	const (
		m1 = 0xa0761d6478bd642f
		m2 = 0xe7037ed1a0b428db
		m3 = 0x8ebc6af09c88c6e3
	)
	hi, lo := bits.Mul64(k.hdr^m1, uint64(k.rem[0])|uint64(k.rem[1])<<32^m2)
	h := hi ^ lo
	hi, lo = bits.Mul64(h^m3, uint64(k.rem[2])|uint64(k.rem[3])<<32^m1)
	return hi ^ lo
}
