package bench

import (
	"context"
	"testing"
)

// TestStubServesEveryWorkload drives every workload through the SDK
// against the stub and checks that the stub knew every request.
func TestStubServesEveryWorkload(t *testing.T) {
	ctx := context.Background()
	for _, w := range Workloads {
		t.Run(w.Name, func(t *testing.T) {
			stub, err := StartStub()
			if err != nil {
				t.Fatal(err)
			}
			defer stub.Close(ctx)
			client, closeIdle, err := NewClient(stub.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer closeIdle()
			f, err := NewFixture(ctx, client, "bench")
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Load(ctx, w.Preload, concurrentClients); err != nil {
				t.Fatal(err)
			}
			st, err := Measure(ctx, w.Concurrency, Limit{Count: 20}, w.Op(f))
			if err != nil {
				t.Fatal(err)
			}
			if st.Ops != 20 {
				t.Errorf("got %d ops, want 20", st.Ops)
			}
			if n, first := stub.Unexpected(); n != 0 {
				t.Errorf("stub answered %d unexpected requests, first %s", n, first)
			}
		})
	}
}
