package engine

import (
	"context"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkWriteItem measures the engine's upsert of a 1 KB item over
// in-memory Pebble, on a container without and with the all-versions
// change log, so the cost of the latest-version index and of the log
// shows apart from HTTP and the SDK.
func BenchmarkWriteItem(b *testing.B) {
	pad := strings.Repeat("x", 1000)
	for _, tc := range []struct{ name, policy string }{
		{"plain", ""},
		{"avad", `,"changeFeedPolicy":{"retentionDuration":60}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e, _ := newTestEngine(b)
			mustCreate(b, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]}`+tc.policy+`}`)
			ref := ItemRef{DB: "db", Coll: "c", PK: `["p"]`, HasPK: true}
			ctx := context.Background()
			i := 0
			for b.Loop() {
				body := `{"id":"` + strconv.Itoa(i%1000) + `","pk":"p","pad":"` + pad + `"}`
				if _, err := e.WriteItem(ctx, ref, Upsert, []byte(body), ""); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
