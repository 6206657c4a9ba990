package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/clock/clocktest"
)

// computedBody is a container body with computed properties defs (JSON
// objects) and an indexingPolicy (JSON, "" for the default). The Go SDK
// has no field for computedProperties, so such containers are created
// and replaced over REST and used through the SDK.
func computedBody(id, policy string, defs ...string) []byte {
	b := `{"id":"` + id + `","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2},"computedProperties":[` + strings.Join(defs, ",") + `]`
	if policy != "" {
		b += `,"indexingPolicy":` + policy
	}
	return []byte(b + "}")
}

func cpDef(name, query string) string {
	return `{"name":"` + name + `","query":"` + query + `"}`
}

// rows runs q across partitions through the SDK and returns each row's
// JSON.
func rows(t *testing.T, e *env, c *azcosmos.ContainerClient, q string) []string {
	t.Helper()
	var out []string
	for _, r := range queryAll(t, e, c, q, azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{PageSizeHint: 3}) {
		out = append(out, string(r))
	}
	return out
}

// TestComputedProperties creates a container with computed properties
// and reads them through the Go SDK in every clause, over the index when
// the policy names them and over a scan when it does not; replaces that
// add and redefine one give the new values at once, during and after the
// rebuild; and the service's constraints are 400s.
func TestComputedProperties(t *testing.T) {
	e := start(t)
	rc := newRest(t, e)
	db := e.database(t, "db-computed")
	body := computedBody("cp", `{"includedPaths":[{"path":"/*"},{"path":"/cp_lowerName/?"}]}`,
		cpDef("cp_lowerName", "SELECT VALUE LOWER(c.name) FROM c"),
		cpDef("cp_20PercentDiscount", "SELECT VALUE (c.price * 0.2) FROM c"),
		cpDef("cp_primaryCategory", "SELECT VALUE SUBSTRING(c.categoryName, 0, INDEX_OF(c.categoryName, ',')) FROM c"))
	if r := rc.do(t, "POST", "/dbs/db-computed/colls", nil, body); r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	r := rc.do(t, "GET", "/dbs/db-computed/colls/cp", nil, nil)
	if !strings.Contains(string(r.body), `"computedProperties":[{"name":"cp_lowerName","query":"SELECT VALUE LOWER(c.name) FROM c"}`) {
		t.Fatalf("the container does not read back its computed properties: %s", r.body)
	}
	c, err := db.NewContainer("cp")
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"Touring-1000", "ROAD-150", "Chain", "Wheel"}
	cats := []string{"Bikes, Touring", "Bikes, Road", "Parts, Chains", "Parts, Wheels"}
	for i := range 40 {
		pk := fmt.Sprintf("p%d", i%5)
		item := map[string]any{"id": fmt.Sprintf("i%02d", i), "pk": pk, "name": fmt.Sprintf("%s-%d", names[i%4], i), "price": 100 + i, "categoryName": cats[i%4]}
		if _, err := c.CreateItem(e.ctx, azcosmos.NewPartitionKeyString(pk), mustJSON(t, item), nil); err != nil {
			t.Fatal(err)
		}
	}
	want := func(pred func(i int) bool) []string {
		var out []string
		for i := range 40 {
			if pred(i) {
				out = append(out, fmt.Sprintf("i%02d", i))
			}
		}
		return out
	}

	// Projection.
	got := rows(t, e, c, "SELECT c.cp_lowerName, c.cp_20PercentDiscount FROM c WHERE c.id = 'i00'")
	if !slices.Equal(got, []string{`{"cp_lowerName":"touring-1000-0","cp_20PercentDiscount":20}`}) {
		t.Errorf("projection: %v", got)
	}
	// WHERE, over the index and over a scan.
	for _, tc := range []struct {
		q       string
		want    []string
		indexed bool
	}{
		{"SELECT c.id FROM c WHERE c.cp_lowerName = 'chain-2'", []string{"i02"}, true},
		{"SELECT c.id FROM c WHERE STARTSWITH(c.cp_lowerName, 'wheel')", want(func(i int) bool { return i%4 == 3 }), true},
		{"SELECT c.id FROM c WHERE c.cp_20PercentDiscount < 21", want(func(i int) bool { return i < 5 }), false},
	} {
		ids, indexed := indexUse(t, e, c, tc.q)
		if !slices.Equal(ids, tc.want) || indexed != tc.indexed {
			t.Errorf("%s: %v (index %v), want %v (index %v)", tc.q, ids, indexed, tc.want, tc.indexed)
		}
	}
	// ORDER BY, read in order from the index.
	ids, indexed := indexedIDs(t, e, c, "SELECT c.id FROM c ORDER BY c.cp_lowerName DESC", 7)
	if len(ids) != 40 || ids[0] != "i07" || ids[39] != "i10" || !indexed {
		t.Errorf("ORDER BY: %v (index %v)", ids, indexed)
	}
	// GROUP BY.
	got = rows(t, e, c, "SELECT COUNT(1) AS n, c.cp_primaryCategory FROM c GROUP BY c.cp_primaryCategory")
	slices.Sort(got)
	if !slices.Equal(got, []string{`{"n":20,"cp_primaryCategory":"Bikes"}`, `{"n":20,"cp_primaryCategory":"Parts"}`}) {
		t.Errorf("GROUP BY: %v", got)
	}
	// SELECT * and a point read return the item as stored.
	for _, row := range rows(t, e, c, "SELECT * FROM c WHERE c.cp_lowerName = 'chain-2'") {
		if strings.Contains(row, "cp_") {
			t.Errorf("SELECT * returned a computed property: %s", row)
		}
	}
	item, err := c.ReadItem(e.ctx, azcosmos.NewPartitionKeyString("p2"), "i02", nil)
	if err != nil || strings.Contains(string(item.Value), "cp_") {
		t.Errorf("point read: %s, %v", item.Value, err)
	}

	// Add one and index it: right at once (the index rebuilds meanwhile,
	// queries scan), and served by the index once it is built.
	body = computedBody("cp", `{"includedPaths":[{"path":"/*"},{"path":"/cp_lowerName/?"},{"path":"/cp_upperCat/?"}]}`,
		cpDef("cp_lowerName", "SELECT VALUE LOWER(c.name) FROM c"),
		cpDef("cp_upperCat", "SELECT VALUE UPPER(c.categoryName) FROM c"))
	if r := rc.do(t, "PUT", "/dbs/db-computed/colls/cp", nil, body); r.status != http.StatusOK {
		t.Fatalf("replace: %d %s", r.status, r.body)
	}
	wantRoad := want(func(i int) bool { return i%4 == 1 })
	check := func(q string, want []string) bool {
		ids, indexed := indexUse(t, e, c, q)
		if !slices.Equal(ids, want) {
			t.Fatalf("%s: %v, want %v", q, ids, want)
		}
		return indexed
	}
	check("SELECT c.id FROM c WHERE c.cp_upperCat = 'BIKES, ROAD'", wantRoad)
	clocktest.WaitUntil(t, "the index on /cp_upperCat", func() bool {
		return check("SELECT c.id FROM c WHERE c.cp_upperCat = 'BIKES, ROAD'", wantRoad)
	})
	// The one dropped is gone from every query.
	if got := rows(t, e, c, "SELECT VALUE c.cp_20PercentDiscount FROM c"); len(got) != 0 {
		t.Errorf("a dropped computed property still has values: %v", got)
	}

	// Redefine the indexed one: the new definition's values at once,
	// never the old entries', and the index again once rebuilt.
	body = computedBody("cp", `{"includedPaths":[{"path":"/*"},{"path":"/cp_lowerName/?"},{"path":"/cp_upperCat/?"}]}`,
		cpDef("cp_lowerName", "SELECT VALUE LOWER(c.name) FROM c"),
		cpDef("cp_upperCat", "SELECT VALUE UPPER(c.name) FROM c"))
	if r := rc.do(t, "PUT", "/dbs/db-computed/colls/cp", nil, body); r.status != http.StatusOK {
		t.Fatalf("replace: %d %s", r.status, r.body)
	}
	check("SELECT c.id FROM c WHERE c.cp_upperCat = 'BIKES, ROAD'", nil)
	check("SELECT c.id FROM c WHERE c.cp_upperCat = 'CHAIN-2'", []string{"i02"})
	clocktest.WaitUntil(t, "the rebuilt index on /cp_upperCat", func() bool {
		return check("SELECT c.id FROM c WHERE c.cp_upperCat = 'CHAIN-2'", []string{"i02"})
	})
}

// TestComputedPropertiesTTL: an expired item is not seen through its
// computed properties, over the index or a scan.
func TestComputedPropertiesTTL(t *testing.T) {
	e := start(t)
	rc := newRest(t, e)
	db := e.database(t, "db-cpttl")
	body := []byte(`{"id":"cpttl","partitionKey":{"paths":["/pk"],"kind":"Hash"},"defaultTtl":-1,
		"computedProperties":[{"name":"cp_lower","query":"SELECT VALUE LOWER(c.name) FROM c"}],
		"indexingPolicy":{"includedPaths":[{"path":"/*"},{"path":"/cp_lower/?"}]}}`)
	if r := rc.do(t, "POST", "/dbs/db-cpttl/colls", nil, body); r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	c, _ := db.NewContainer("cpttl")
	for _, it := range []string{`{"id":"short","pk":"p","name":"Ada","ttl":5}`, `{"id":"long","pk":"p","name":"ADA"}`} {
		if _, err := c.CreateItem(e.ctx, pk, []byte(it), nil); err != nil {
			t.Fatal(err)
		}
	}
	e.clock.Advance(10 * time.Second)
	for _, q := range []string{"SELECT c.id FROM c WHERE c.cp_lower = 'ada'", "SELECT c.id FROM c WHERE LENGTH(c.cp_lower) = 3"} {
		if ids, _ := indexUse(t, e, c, q); !slices.Equal(ids, []string{"long"}) {
			t.Errorf("%s: %v, want only the unexpired item", q, ids)
		}
	}
}

// TestComputedPropertiesRefused: the service's constraints on computed
// property definitions, each a 400 that says what is wrong.
func TestComputedPropertiesRefused(t *testing.T) {
	e := start(t)
	rc := newRest(t, e)
	e.database(t, "db-cpbad")
	many := make([]string, 21)
	for i := range many {
		many[i] = cpDef(fmt.Sprintf("cp_%d", i), "SELECT VALUE 1 FROM c")
	}
	for _, tc := range []struct {
		name, cps, policy, want string
	}{
		{"not an array", `{"name":"a","query":"SELECT VALUE 1 FROM c"}`, "", "One of the specified inputs is invalid"},
		{"no name", `[{"query":"SELECT VALUE 1 FROM c"}]`, "", "computed property 1 has no"},
		{"no query", `[{"name":"a"}]`, "", "computed property 'a' has no"},
		{"more than 20", "[" + strings.Join(many, ",") + "]", "", "at most 20"},
		{"repeated name", "[" + cpDef("a", "SELECT VALUE 1 FROM c") + "," + cpDef("a", "SELECT VALUE 2 FROM c") + "]", "", "must be unique"},
		{"id", "[" + cpDef("id", "SELECT VALUE 1 FROM c") + "]", "", "reserved for a system property"},
		{"_rid", "[" + cpDef("_rid", "SELECT VALUE 1 FROM c") + "]", "", "reserved for a system property"},
		{"not VALUE", "[" + cpDef("a", "SELECT c.x FROM c") + "]", "", "must have the form SELECT VALUE"},
		{"no FROM", "[" + cpDef("a", "SELECT VALUE 1") + "]", "", "needs a FROM clause"},
		{"JOIN", "[" + cpDef("a", "SELECT VALUE t FROM c JOIN t IN c.tags") + "]", "", "cannot use JOIN"},
		{"WHERE", "[" + cpDef("a", "SELECT VALUE c.x FROM c WHERE c.x > 1") + "]", "", "cannot use WHERE"},
		{"GROUP BY", "[" + cpDef("a", "SELECT VALUE c.x FROM c GROUP BY c.x") + "]", "", "cannot use GROUP BY"},
		{"ORDER BY", "[" + cpDef("a", "SELECT VALUE c.x FROM c ORDER BY c.x") + "]", "", "cannot use ORDER BY"},
		{"TOP", "[" + cpDef("a", "SELECT TOP 1 VALUE c.x FROM c") + "]", "", "cannot use TOP"},
		{"DISTINCT", "[" + cpDef("a", "SELECT DISTINCT VALUE c.x FROM c") + "]", "", "cannot use DISTINCT"},
		{"OFFSET LIMIT", "[" + cpDef("a", "SELECT VALUE c.x FROM c OFFSET 0 LIMIT 1") + "]", "", "cannot use OFFSET LIMIT"},
		{"subquery", "[" + cpDef("a", "SELECT VALUE (SELECT VALUE 1) FROM c") + "]", "", "cannot use a subquery"},
		{"aggregate", "[" + cpDef("a", "SELECT VALUE MAX(c.x) FROM c") + "]", "", "cannot use the aggregate function MAX"},
		{"nondeterministic", "[" + cpDef("a", "SELECT VALUE GetCurrentDateTime() FROM c") + "]", "", "cannot use the nondeterministic function GetCurrentDateTime"},
		{"another computed property", "[" + cpDef("a", "SELECT VALUE LOWER(c.x) FROM c") + "," + cpDef("b", "SELECT VALUE c.a FROM c") + "]", "", "cannot use another computed property ('a')"},
		{"syntax", "[" + cpDef("a", "SELECT VALUE FROM c") + "]", "", "Syntax error at line 1"},
		{"spatial index", "[" + cpDef("loc", "SELECT VALUE c.p FROM c") + "]", `{"spatialIndexes":[{"path":"/loc/*","types":["Point"]}]}`, "cannot have a spatial index"},
	} {
		body := `{"id":"bad","partitionKey":{"paths":["/pk"],"kind":"Hash"},"computedProperties":` + tc.cps
		if tc.policy != "" {
			body += `,"indexingPolicy":` + tc.policy
		}
		r := rc.do(t, "POST", "/dbs/db-cpbad/colls", nil, []byte(body+"}"))
		if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), tc.want) {
			t.Errorf("%s: %d %s, want 400 saying %q", tc.name, r.status, r.body, tc.want)
		}
	}

	// Replaces: a new computed property may not take a path the policy
	// already names; one the new policy still names may not be dropped.
	body := computedBody("rep", `{"includedPaths":[{"path":"/*"},{"path":"/cp_a/?"}],"excludedPaths":[{"path":"/b/?"}]}`, cpDef("cp_a", "SELECT VALUE LOWER(c.x) FROM c"))
	if r := rc.do(t, "POST", "/dbs/db-cpbad/colls", nil, body); r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	for _, tc := range []struct {
		name string
		body []byte
		want string
	}{
		{"add on a named path", computedBody("rep", `{"includedPaths":[{"path":"/*"},{"path":"/cp_a/?"}],"excludedPaths":[{"path":"/b/?"}]}`,
			cpDef("cp_a", "SELECT VALUE LOWER(c.x) FROM c"), cpDef("b", "SELECT VALUE 1 FROM c")), "matches a path the container's indexing policy already names (/b)"},
		{"drop an indexed one", computedBody("rep", `{"includedPaths":[{"path":"/*"},{"path":"/cp_a/?"}]}`), "cannot be removed while the indexing policy names its path (/cp_a)"},
	} {
		r := rc.do(t, "PUT", "/dbs/db-cpbad/colls/rep", nil, tc.body)
		if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), tc.want) {
			t.Errorf("%s: %d %s, want 400 saying %q", tc.name, r.status, r.body, tc.want)
		}
	}
}
