package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ebbdb/ebb/internal/storage/postgres/pgtest"
)

// TestRunCluster runs every configuration of `ebb bench cluster` for a few
// operations, in alternating rounds, on a fresh PostgreSQL schema and
// checks the report's shape;
// it asserts nothing about speed. It needs EBB_TEST_POSTGRES_URL.
func TestRunCluster(t *testing.T) {
	store := pgtest.FreshSchema(t)
	rep, err := RunCluster(context.Background(), ClusterOptions{
		Store: store, Nodes: []int{1, 2}, Partitions: 4,
		Limit: Limit{Count: 40}, TempDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Baseline.Ops != 40 || rep.Rounds != 5 {
		t.Errorf("baseline: %+v in %d rounds", rep.Baseline, rep.Rounds)
	}
	// In memory, in memory plus the baseline's write, Pebble, PostgreSQL
	// with one partition, then each node count.
	want := []struct {
		storage      string
		nodes, parts int
	}{{inMemory, 1, 4}, {inMemoryPlusBaseline, 1, 4}, {"durable Pebble", 1, 4}, {"PostgreSQL", 1, 1}, {"PostgreSQL", 1, 4}, {"PostgreSQL", 2, 4}}
	if len(rep.Results) != len(want) {
		t.Fatalf("got %d results, want %d", len(rep.Results), len(want))
	}
	for i, res := range rep.Results {
		if w := want[i]; res.Storage != w.storage || res.Nodes != w.nodes || res.Partitions != w.parts {
			t.Errorf("result %d is %s, %d nodes, %d partitions; want %+v", i, res.Storage, res.Nodes, res.Partitions, w)
		}
		if res.ProcessCPU <= 0 {
			t.Errorf("result %d (%s): no CPU time per upsert", i, res.Storage)
		}
		wantReads := 40
		if res.Storage == inMemoryPlusBaseline {
			wantReads = 0 // its reads would be the in-memory node's again
		}
		if res.Read.Ops != wantReads || res.Upsert.Ops != 40 {
			t.Errorf("result %d: read %+v, upsert %+v", i, res.Read, res.Upsert)
		}
		// Every upsert on PostgreSQL writes WAL, and so does the
		// baseline's write after each in-memory one; Pebble's are not the
		// database's.
		if onPG := res.Storage == "PostgreSQL" || res.Storage == inMemoryPlusBaseline; onPG != (res.DB.HasWAL && res.DB.WALPerUpsert >= 100) || res.DB.CPUPerUpsert < 0 {
			t.Errorf("result %d (%s): database work %+v", i, res.Storage, res.DB)
		}
	}
	if !rep.BaselineDB.HasWAL || rep.BaselineDB.WALPerUpsert < 100 {
		t.Errorf("baseline: database work %+v", rep.BaselineDB)
	}
	var out bytes.Buffer
	if err := rep.WriteMarkdown(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "pgx") {
		t.Errorf("the report does not name its baseline:\n%s", out.String())
	}
}
