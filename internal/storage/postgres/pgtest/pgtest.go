// Package pgtest gives tests a PostgreSQL database of their own: a fresh
// schema in the database named by EBB_TEST_POSTGRES_URL, dropped when the
// test ends. Tests that need PostgreSQL skip when the variable is unset;
// .ci/postgres.sh starts a throwaway server and prints it.
package pgtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
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
