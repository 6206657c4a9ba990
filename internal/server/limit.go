package server

import (
	"net"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// limitListener holds at most cap(slots) connections open at once. With
// all of them open, Accept waits for one to close before it takes the
// next from the kernel's backlog: a burst beyond the cap is delayed, not
// refused, and clients that hold connections open cannot make Ebb run
// out of file descriptors.
type limitListener struct {
	net.Listener
	// slots holds a token per open connection.
	slots chan struct{}
	// closed is closed by Close, ending an Accept that waits for a slot.
	closed    chan struct{}
	closeOnce sync.Once
	open      prometheus.Gauge
	capHit    prometheus.Counter
}

func newLimitListener(l net.Listener, max int, open prometheus.Gauge, capHit prometheus.Counter) *limitListener {
	return &limitListener{Listener: l, slots: make(chan struct{}, max), closed: make(chan struct{}), open: open, capHit: capHit}
}

// Accept waits for a free slot, then for a connection.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	default:
		l.capHit.Inc()
		select {
		case l.slots <- struct{}{}:
		case <-l.closed:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	l.open.Inc()
	return &limitConn{Conn: c, l: l}, nil
}

// Close closes the listener and ends an Accept waiting for a slot.
func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// limitConn gives its slot back when it is closed, once.
type limitConn struct {
	net.Conn
	l           *limitListener
	releaseOnce sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.releaseOnce.Do(func() {
		c.l.open.Dec()
		<-c.l.slots
	})
	return err
}
