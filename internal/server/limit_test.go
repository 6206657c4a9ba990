package server

import (
	"bufio"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ebbdb/ebb/internal/clock/clocktest"
)

// TestConnectionCap fills the API listener's cap with kept-alive
// connections and checks that one more connection waits, unaccepted,
// while they are open, and is served once one of them closes.
func TestConnectionCap(t *testing.T) {
	const max = 2
	s := startTest(t, Config{
		NoTLS:          true,
		MaxConnections: max,
		// Long, so that nothing but the test closes a connection.
		Timeouts: Timeouts{ReadHeader: time.Minute, Read: time.Minute, Write: 2 * time.Minute, Idle: time.Minute},
	})
	open := s.Metrics.OpenConnections.WithLabelValues("api")
	capHit := s.Metrics.ConnectionCapHit.WithLabelValues("api")
	type conn struct {
		net.Conn
		br *bufio.Reader
	}
	dial := func() conn {
		c, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		// A safety net only: every read below is answered long before.
		c.SetReadDeadline(wall.Now().Add(30 * time.Second))
		return conn{c, bufio.NewReader(c)}
	}

	var held []conn
	for range max {
		c := dial()
		if err := live(c, c.br); err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	clocktest.WaitUntil(t, "the listener to reach its cap", func() bool { return value(capHit) >= 1 })

	// The kernel completes the connection; the server must not take it.
	extra := dial()
	write(t, extra, "GET /_ebb/health/live HTTP/1.1\r\nHost: ebb\r\n\r\n")
	served := make(chan error, 1)
	go func() { served <- readLive(extra.br) }()
	// A round trip on a held connection gives the server every chance to
	// take the extra one, if it would.
	if err := live(held[1], held[1].br); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-served:
		t.Fatalf("the connection beyond the cap was served while the cap was full (%v)", err)
	default:
	}
	if got := value(open); got != max {
		t.Fatalf("open connections while the cap is full: got %v, want %d", got, max)
	}

	held[0].Close()
	if err := <-served; err != nil {
		t.Fatalf("the connection beyond the cap, once a slot was free: %v", err)
	}
	if got := value(open); got > max {
		t.Fatalf("open connections: got %v, more than the cap %d", got, max)
	}
}

// TestLimitListenerClose checks that closing a listener ends an Accept
// that waits for a slot.
func TestLimitListenerClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newLimitListener(ln, 1, prometheus.NewGauge(prometheus.GaugeOpts{Name: "open"}), prometheus.NewCounter(prometheus.CounterOpts{Name: "hit"}))
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	first, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	accepted := make(chan error, 1)
	go func() {
		_, err := l.Accept()
		accepted <- err
	}()
	l.Close()
	if err := <-accepted; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept waiting for a slot after Close: got %v, want net.ErrClosed", err)
	}
	// Closing a connection twice gives its slot back once.
	first.Close()
	if err := first.Close(); err == nil || len(l.slots) != 0 {
		t.Fatalf("second Close: got %v with %d slots taken, want an error and 0", err, len(l.slots))
	}
}

// value reads a gauge or counter.
func value(m prometheus.Metric) float64 {
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		panic(err)
	}
	return d.GetGauge().GetValue() + d.GetCounter().GetValue()
}
