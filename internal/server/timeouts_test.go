package server

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSlowLoris holds connections open the ways a slow or hostile client
// can (connecting and sending nothing, sending half the headers, sending
// the headers and half the body, staying idle after a request) and
// checks that the server closes every one of them by itself, on its own
// timeouts, while a normal client is served in the one slot the cap
// leaves. The test never sleeps and asserts no duration: the server's
// timeouts do the waiting, and a generous read deadline only keeps a
// server that never closes from hanging the test.
func TestSlowLoris(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		name := "http"
		if useTLS {
			name = "https"
		}
		t.Run(name, func(t *testing.T) { slowLoris(t, useTLS) })
	}
}

func slowLoris(t *testing.T, useTLS bool) {
	const perKind = 3
	body := `{"id":"slow-loris"}`
	kinds := []struct {
		name string
		// handshake: over TLS, the client completes the handshake first.
		handshake bool
		start     func(t *testing.T, c net.Conn, br *bufio.Reader)
		// reply is how what the server sends before it closes begins.
		reply string
	}{
		{"sends nothing", false, func(*testing.T, net.Conn, *bufio.Reader) {}, ""},
		{"sends half the headers", true, func(t *testing.T, c net.Conn, _ *bufio.Reader) {
			write(t, c, "POST /dbs HTTP/1.1\r\nHost: ebb\r\nx-ms-da")
		}, ""},
		{"sends half the body", true, func(t *testing.T, c net.Conn, _ *bufio.Reader) {
			write(t, c, fmt.Sprintf("POST /dbs HTTP/1.1\r\nHost: ebb\r\n%sContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
				signedHeaders(t, "POST", "dbs", ""), len(body), body[:len(body)/2]))
		}, "HTTP/1.1 408 "},
		{"stays idle after a request", true, func(t *testing.T, c net.Conn, br *bufio.Reader) {
			if err := live(c, br); err != nil {
				t.Fatal(err)
			}
		}, ""},
	}
	s := startTest(t, Config{
		NoTLS: !useTLS,
		// Short, so the test is quick; long beside one local request, so
		// the attack is still on while the normal client is served.
		Timeouts:       Timeouts{ReadHeader: time.Second, Read: time.Second, Write: 10 * time.Second, Idle: time.Second},
		MaxConnections: len(kinds)*perKind + 1,
	})

	type attack struct {
		kind int
		conn net.Conn
		br   *bufio.Reader
	}
	var attacks []attack
	for k, kind := range kinds {
		for range perKind {
			c, err := net.Dial("tcp", s.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if useTLS && kind.handshake {
				tc := tls.Client(c, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
				if err := tc.Handshake(); err != nil {
					t.Fatal(err)
				}
				c = tc
			}
			a := attack{kind: k, conn: c, br: bufio.NewReader(c)}
			kind.start(t, a.conn, a.br)
			attacks = append(attacks, a)
		}
	}

	// A normal client, in the slot the attack leaves free.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, s.URL+"dbs", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range strings.Split(strings.TrimSpace(signedHeaders(t, "GET", "dbs", "")), "\r\n") {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("normal client during the attack: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("normal client during the attack: got %s, want 200", resp.Status)
	}

	for i, a := range attacks {
		kind := kinds[a.kind]
		a.conn.SetReadDeadline(wall.Now().Add(30 * time.Second))
		got, err := io.ReadAll(a.br)
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			t.Errorf("connection %d, which %s: still open after 30 s; the server never closed it", i, kind.name)
		case err != nil && !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.ErrUnexpectedEOF):
			t.Errorf("connection %d, which %s: read %v, want EOF or a reset", i, kind.name, err)
		case !strings.HasPrefix(string(got), kind.reply):
			t.Errorf("connection %d, which %s: the server sent %.80q before closing, want it to begin %q", i, kind.name, got, kind.reply)
		}
	}
}

// write sends s on c.
func write(t *testing.T, c net.Conn, s string) {
	t.Helper()
	if _, err := io.WriteString(c, s); err != nil {
		t.Fatal(err)
	}
}

// live sends GET /_ebb/health/live on c, which stays open, and reads the
// answer, which must be 200.
func live(c net.Conn, br *bufio.Reader) error {
	if _, err := io.WriteString(c, "GET /_ebb/health/live HTTP/1.1\r\nHost: ebb\r\n\r\n"); err != nil {
		return err
	}
	return readLive(br)
}

// readLive reads the answer to GET /_ebb/health/live, which must be 200.
func readLive(br *bufio.Reader) error {
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /_ebb/health/live: got %s, want 200", resp.Status)
	}
	return nil
}

// TestEveryListenerHasTimeouts checks that both listeners' servers carry
// the configured timeouts, and their listeners the cap, and that a
// config that sets none gets the defaults.
func TestEveryListenerHasTimeouts(t *testing.T) {
	custom := Timeouts{ReadHeader: 3 * time.Second, Read: 4 * time.Second, Write: 5 * time.Second, Idle: 6 * time.Second}
	for _, tt := range []struct {
		name     string
		timeouts Timeouts
		max      int
		want     Timeouts
		wantMax  int
	}{
		{"defaults", Timeouts{}, 0, DefaultTimeouts, DefaultMaxConnections},
		{"configured", custom, 7, custom, 7},
	} {
		s := startTest(t, Config{NoTLS: true, MetricsListen: "127.0.0.1:0", Timeouts: tt.timeouts, MaxConnections: tt.max})
		for _, l := range []struct {
			name string
			srv  *http.Server
			ln   net.Listener
		}{{"api", s.http, s.listener}, {"metrics", s.metricsHTTP, s.metricsListener}} {
			got := Timeouts{ReadHeader: l.srv.ReadHeaderTimeout, Read: l.srv.ReadTimeout, Write: l.srv.WriteTimeout, Idle: l.srv.IdleTimeout}
			if got != tt.want {
				t.Errorf("%s, %s listener: got timeouts %+v, want %+v", tt.name, l.name, got, tt.want)
			}
			if ll, ok := l.ln.(*limitListener); !ok || cap(ll.slots) != tt.wantMax {
				t.Errorf("%s, %s listener: got %T, want a limitListener with cap %d", tt.name, l.name, l.ln, tt.wantMax)
			}
		}
	}
}

// TestConfigChecked checks that timeouts and caps that cannot work stop
// the server from starting, saying why.
func TestConfigChecked(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"negative timeout", Config{Timeouts: Timeouts{Idle: -time.Second}}, "idle timeout must not be negative"},
		{"write not beyond read", Config{Timeouts: Timeouts{Read: time.Minute, Write: time.Minute}}, "write timeout (1m0s) must exceed the read timeout (1m0s)"},
		{"read beyond the default write", Config{Timeouts: Timeouts{Read: 5 * time.Minute}}, "write timeout (2m0s) must exceed the read timeout (5m0s)"},
		{"negative cap", Config{MaxConnections: -1}, "connection cap must not be negative"},
	} {
		tt.cfg.Listen, tt.cfg.Memory = "127.0.0.1:0", true
		s, err := Start(t.Context(), tt.cfg)
		if err == nil {
			s.Shutdown(t.Context())
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Start = %v, want an error saying %q", tt.name, err, tt.want)
		}
	}
}
