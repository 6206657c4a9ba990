package e2e

import (
	"fmt"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// TestQueryPaging pins the paging the Go SDK's own emulator tests assert:
// ORDER BY returns a continuation only while rows remain (10 items in
// pages of 5 is exactly 2 pages), a plain scan whenever a page is full.
func TestQueryPaging(t *testing.T) {
	e := start(t)
	c := e.container(t, pkProps("paging", "/pk"))
	p := azcosmos.NewPartitionKeyString("1")
	for i := 0; i < 10; i++ {
		body := fmt.Sprintf(`{"id":"%d","pk":"1","someProp":"some_%d"}`, i, i)
		if _, err := c.CreateItem(e.ctx, p, []byte(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	pages := func(q string, pk azcosmos.PartitionKey) (int, []string) {
		pager := c.NewQueryItemsPager(q, pk, &azcosmos.QueryOptions{PageSizeHint: 5})
		n := 0
		var ids []string
		for pager.More() {
			page, err := pager.NextPage(e.planCtx)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			n++
			for _, it := range page.Items {
				if it[0] == '"' { // SELECT VALUE c.id
					ids = append(ids, string(it[1:len(it)-1]))
					continue
				}
				ids = append(ids, fmt.Sprint(decode(t, it)["id"]))
			}
		}
		return n, ids
	}
	for _, tc := range []struct {
		q     string
		pk    azcosmos.PartitionKey
		pages int
	}{
		{"SELECT * FROM c ORDER BY c.id", p, 2},
		{"SELECT VALUE c.id FROM c ORDER BY c.id", p, 2},
		{"SELECT * FROM c WHERE c.pk = '1' ORDER BY c.id", azcosmos.NewPartitionKey(), 2},
		{"SELECT * FROM c", p, 3},
	} {
		n, ids := pages(tc.q, tc.pk)
		if n != tc.pages || len(ids) != 10 {
			t.Errorf("%s: %d pages, %d rows; want %d pages, 10 rows", tc.q, n, len(ids), tc.pages)
		}
	}
	if _, ids := pages("SELECT * FROM docs c WHERE c.someProp = 'some_4'", p); fmt.Sprint(ids) != "[4]" {
		t.Errorf("equality on a string property: %v, want [4]", ids)
	}
}
