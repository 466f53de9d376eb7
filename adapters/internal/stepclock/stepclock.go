// Package stepclock is the adapters module's test clock: a mock clock whose
// waits elapse at once, in the order they were armed, so a retry chain's
// backoffs take no real time and a test reads them.
package stepclock

import (
	"slices"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// Clock is a clock.Mock that moves on by each wait as soon as it is armed
// (AfterFunc), on one stepping goroutine: the moves happen one after the
// other, each from the time the last one ended. (Moving the mock from a new
// goroutine per wait does not: a late move's final write can set the mock's
// time back after a later move fired its timer, and the next wait is then
// never reached.)
type Clock struct {
	*clock.Mock
	armed chan time.Duration
	done  chan struct{}
	mu    sync.Mutex
	waits []time.Duration
}

// New starts the stepping goroutine; Stop ends it.
func New() *Clock {
	c := &Clock{Mock: clock.NewMock(), armed: make(chan time.Duration, 16), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for d := range c.armed {
			c.Mock.Add(d)
		}
	}()
	return c
}

// AfterFunc implements clock.Clock: it arms the mock's timer, records the
// wait and asks the stepping goroutine to move the mock on by it, which
// fires the timer (f runs on a goroutine of its own, as with the mock).
func (c *Clock) AfterFunc(d time.Duration, f func()) *clock.Timer {
	t := c.Mock.AfterFunc(d, f)
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	c.armed <- d
	return t
}

// Waits returns the waits armed so far, in order.
func (c *Clock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.waits)
}

// Stop ends the stepping goroutine once it has made the moves asked so far.
// No AfterFunc may follow it.
func (c *Clock) Stop() {
	close(c.armed)
	<-c.done
}
