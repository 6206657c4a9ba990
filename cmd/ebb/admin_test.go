package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/ebbtest"
	"github.com/ebbdb/ebb/internal/engine"
	"github.com/ebbdb/ebb/test/ebbproc"
)

// TestAdminCommands runs ebb clock, ebb ttl status and ebb ls against a
// running server, as a user at a terminal would.
func TestAdminCommands(t *testing.T) {
	epoch := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	srv := ebbtest.New(t, ebbtest.StartingAt(epoch))
	ctx := context.Background()
	if _, err := srv.Client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "shop"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "empty"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := srv.Client.NewDatabase("shop")
	hour := int32(3600)
	for _, props := range []azcosmos.ContainerProperties{
		{ID: "carts", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/user"}, Version: 2}, DefaultTimeToLive: &hour},
		{ID: "orders", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/user"}}},
	} {
		if _, err := db.CreateContainer(ctx, props, nil); err != nil {
			t.Fatal(err)
		}
	}
	carts, _ := db.NewContainer("carts")
	for i := range 5 {
		item := fmt.Sprintf(`{"id":"c%d","user":"u%d","ttl":%d}`, i, i%2, 60*(i+1))
		if _, err := carts.CreateItem(ctx, azcosmos.NewPartitionKeyString(fmt.Sprintf("u%d", i%2)), []byte(item), nil); err != nil {
			t.Fatal(err)
		}
	}
	admin := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		all := append(args, "--endpoint", srv.Endpoint)
		if err := adminCommands[args[0]](all[1:], &out); err != nil {
			t.Fatalf("ebb %s: %v", strings.Join(args, " "), err)
		}
		return out.String()
	}

	if got, want := admin("clock"), "2026-11-22T06:00:00Z (epoch second 1795327200)\n"; got != want {
		t.Errorf("ebb clock = %q, want %q", got, want)
	}
	if got, want := admin("clock", "advance", "90s"), "2026-11-22T06:01:30Z (epoch second 1795327290)\n"; got != want {
		t.Errorf("ebb clock advance 90s = %q, want %q", got, want)
	}
	if !srv.Now().Equal(epoch.Add(90 * time.Second)) {
		t.Errorf("server clock at %v after advance 90s", srv.Now())
	}

	// c0 (ttl 60) has expired; c1 (120) expires within the minute.
	status := admin("ttl", "status", "shop/carts")
	for _, want := range []string{"3600 s by default", "expired, not yet purged", "next expiry", "2026-11-22T06:02:00Z", "minute 1, hour 4"} {
		if !strings.Contains(status, want) {
			t.Errorf("ebb ttl status lacks %q:\n%s", want, status)
		}
	}
	var js struct {
		Mode string `json:"mode"`
	}
	if err := json.Unmarshal([]byte(admin("ttl", "status", "--json", "shop/carts")), &js); err != nil || js.Mode != "on" {
		t.Errorf("ebb ttl status --json: mode %q, %v", js.Mode, err)
	}

	ls := admin("ls")
	var rows []string
	for _, line := range strings.Split(strings.TrimSpace(ls), "\n") {
		rows = append(rows, strings.Join(strings.Fields(line), " "))
	}
	wantRows := []string{"DATABASE CONTAINER ITEMS PARTITION KEY TTL", "shop carts 4 /user 3600 s by default", "shop orders 0 /user off", "empty (no containers)"}
	if strings.Join(rows, "\n") != strings.Join(wantRows, "\n") {
		t.Errorf("ebb ls:\n%s\nwant rows:\n%s", ls, strings.Join(wantRows, "\n"))
	}
	var lsJSON struct {
		Containers []lsEntry `json:"containers"`
	}
	if err := json.Unmarshal([]byte(admin("ls", "--json")), &lsJSON); err != nil || len(lsJSON.Containers) != 2 || lsJSON.Containers[0].Items != 4 {
		t.Errorf("ebb ls --json: %+v, %v", lsJSON, err)
	}

	// carts stores its items in one partition; split it, and its four
	// items (the expired one purged) are counted again in the two.
	parts := strings.Split(admin("partitions", "shop/carts"), "\n")
	if len(parts) != 4 || parts[0] != "container shop/carts, split past 50.0 GiB of documents" ||
		strings.Join(strings.Fields(parts[1]), " ") != "RANGE MIN MAX PARENTS ITEMS DOCUMENTS LSN" ||
		!strings.HasPrefix(strings.Join(strings.Fields(parts[2]), " "), `0 "" "FF" - `) {
		t.Errorf("ebb partitions:\n%s", strings.Join(parts, "\n"))
	}
	if got, want := admin("partitions", "split", "shop/carts", "0"), "range 0 split into 1 and 2\n"; got != want {
		t.Errorf("ebb partitions split = %q, want %q", got, want)
	}
	var rep engine.PartitionsStatus
	ebbproc.WaitFor(t, "the split's children counted", func() bool {
		if err := json.Unmarshal([]byte(admin("partitions", "--json", "shop/carts")), &rep); err != nil || len(rep.Partitions) != 2 {
			t.Fatalf("ebb partitions --json after the split: %+v, %v", rep, err)
		}
		p0, p1 := rep.Partitions[0], rep.Partitions[1]
		return p0.Counted && p1.Counted && p0.Items+p1.Items == 4 && p0.Parents[0] == "0" && p0.MaxExclusive == p1.MinInclusive
	})
}

// TestAdminErrors: what a user gets wrong is answered with what to do.
func TestAdminErrors(t *testing.T) {
	srv := ebbtest.New(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"ttl", "status", "nodb"}, "DATABASE/CONTAINER"},
		{[]string{"ttl", "status", "no/such"}, "404"},
		{[]string{"clock", "advance", "--", "-5m"}, "only moves forward"},
		{[]string{"clock", "advance", "soon"}, "neither a duration"},
		{[]string{"clock", "set", "tomorrow"}, "RFC 3339"},
		{[]string{"ls", "--key", "bm90IHRoZSBrZXk=", "--endpoint", srv.Endpoint}, "401"},
		{[]string{"ls", "--endpoint", "localhost:8081"}, "--endpoint must be"},
		{[]string{"partitions", "split", "shop/carts"}, "split DATABASE/CONTAINER RANGE"},
		{[]string{"partitions", "no/such"}, "404"},
		{[]string{"partitions", "split", "no/such", "0"}, "404"},
	} {
		args := append(tt.args, "--endpoint", srv.Endpoint)
		if tt.args[0] == "ls" {
			args = tt.args
		}
		err := adminCommands[args[0]](args[1:], &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ebb %s: got %v, want an error saying %q", strings.Join(tt.args, " "), err, tt.want)
		}
	}
}
