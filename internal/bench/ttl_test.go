package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/ebbdb/ebb/internal/storage/postgres/pgtest"
)

// TestRunTTLStorm runs the expiry storm of `ebb bench ttl` on a few items,
// on durable Pebble and (with EBB_TEST_POSTGRES_URL) on PostgreSQL, and
// checks the report's shape; it asserts nothing about speed. The other
// phases wait on the real clock for tens of seconds and are left to the
// command.
func TestRunTTLStorm(t *testing.T) {
	for _, store := range []string{"pebble", "postgres"} {
		t.Run(store, func(t *testing.T) {
			opts := TTLOptions{StormOnly: true, StormItems: 2000, TempDir: t.TempDir()}
			if store == "postgres" {
				opts.Store = pgtest.FreshSchema(t)
			}
			rep, err := RunTTL(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			// Only the shape: how long the purge took, and how many reads
			// ran beside it, depend on the machine.
			if s := rep.Storm; s.Items != 2000 {
				t.Errorf("storm: %+v", s)
			}
			var out strings.Builder
			if err := rep.WriteMarkdown(&out); err != nil || !strings.Contains(out.String(), "storm") {
				t.Errorf("%s: %v", out.String(), err)
			}
		})
	}
}
