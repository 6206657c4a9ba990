// Package pgtest gives tests a PostgreSQL database of their own: a fresh
// schema in the database named by EBB_TEST_POSTGRES_URL, dropped when the
// test ends. Tests that need PostgreSQL skip when the variable is unset;
// .ci/postgres.sh starts a throwaway server and prints it.
package pgtest

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// EnvURL names the variable holding the test database's URL.
const EnvURL = "EBB_TEST_POSTGRES_URL"

// URL returns the test database's URL, skipping the test when unset.
func URL(tb testing.TB) string {
	u := os.Getenv(EnvURL)
	if u == "" {
		tb.Skipf("%s is not set; start a throwaway PostgreSQL with: eval \"$(.ci/postgres.sh)\"", EnvURL)
	}
	return u
}

// FreshSchema creates an empty schema and returns a URL whose search_path
// selects it.
func FreshSchema(tb testing.TB) string {
	base := URL(tb)
	ctx := context.Background()
	schema := fmt.Sprintf("ebbtest_%d_%x", os.Getpid(), rand.Uint64())
	admin := func(sql string) error {
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := admin("CREATE SCHEMA " + schema); err != nil {
		tb.Fatalf("create schema: %v", err)
	}
	tb.Cleanup(func() {
		if err := admin("DROP SCHEMA " + schema + " CASCADE"); err != nil {
			tb.Errorf("drop schema: %v", err)
		}
	})
	return WithParams(tb, base, map[string]string{"search_path": schema})
}

// WithParams sets connection parameters in a URL or key=value string;
// host and port go to the host part of a URL.
func WithParams(tb testing.TB, conn string, params map[string]string) string {
	if !strings.HasPrefix(conn, "postgres://") && !strings.HasPrefix(conn, "postgresql://") {
		for k, v := range params {
			conn += fmt.Sprintf(" %s='%s'", k, v)
		}
		return conn
	}
	u, err := url.Parse(conn)
	if err != nil {
		tb.Fatal(err)
	}
	q := u.Query()
	for k, v := range params {
		switch k {
		case "host":
			u.Host = net.JoinHostPort(v, u.Port())
		case "port":
			u.Host = net.JoinHostPort(u.Hostname(), v)
		default:
			q.Set(k, v)
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// ProxyMode says what a Proxy does with connections.
type ProxyMode int

const (
	Forward   ProxyMode = iota // pass bytes through
	Refuse                     // close every connection at once
	Blackhole                  // accept and never answer
)

// Proxy is a TCP relay in front of the test database that can cut it
// off, to test what happens when the database goes away.
type Proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex // guards mode and conns
	mode  ProxyMode
	conns []net.Conn
}

// StartProxy starts a relay to the database conn names.
func StartProxy(tb testing.TB, conn string) *Proxy {
	cfg, err := pgconn.ParseConfig(conn)
	if err != nil {
		tb.Fatal(err)
	}
	if strings.HasPrefix(cfg.Host, "/") {
		tb.Skip("the proxy tests need a TCP database address, not a socket")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &Proxy{ln: ln, target: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))}
	go p.serve()
	tb.Cleanup(func() {
		ln.Close()
		p.SetMode(Refuse)
	})
	return p
}

// URL is conn redirected through the proxy.
func (p *Proxy) URL(tb testing.TB, conn string) string {
	addr := p.ln.Addr().(*net.TCPAddr)
	return WithParams(tb, conn, map[string]string{"host": "127.0.0.1", "port": strconv.Itoa(addr.Port)})
}

// SetMode changes what the proxy does; leaving Forward closes every
// connection it relays.
func (p *Proxy) SetMode(m ProxyMode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode = m
	if m != Forward {
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
	}
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		mode := p.mode
		p.conns = append(p.conns, c)
		p.mu.Unlock()
		switch mode {
		case Refuse:
			c.Close()
		case Forward:
			go p.relay(c)
		case Blackhole:
			// Hold the connection open until the mode changes.
		}
	}
}

func (p *Proxy) relay(c net.Conn) {
	d, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.mode != Forward {
		p.mu.Unlock()
		c.Close()
		d.Close()
		return
	}
	p.conns = append(p.conns, d)
	p.mu.Unlock()
	go func() {
		io.Copy(d, c)
		d.Close()
	}()
	io.Copy(c, d)
	c.Close()
}
