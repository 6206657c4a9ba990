package ebbtest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/ebbtest"
)

// A session item with a time to live of one hour, read before and after
// the server's clock moves past it. In a test, ebbtest.New(t) replaces
// Start and Close.
func Example() {
	srv, err := ebbtest.Start()
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	ctx := context.Background()

	if _, err := srv.Client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "app"}, nil); err != nil {
		panic(err)
	}
	db, _ := srv.Client.NewDatabase("app")
	ttl := int32(-1) // TTL on, with no default: items choose their own
	_, err = db.CreateContainer(ctx, azcosmos.ContainerProperties{
		ID:                     "sessions",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/user"}},
		DefaultTimeToLive:      &ttl,
	}, nil)
	if err != nil {
		panic(err)
	}
	sessions, _ := db.NewContainer("sessions")
	pk := azcosmos.NewPartitionKeyString("ana")
	item := []byte(`{"id":"s1","user":"ana","ttl":3600}`)
	if _, err := sessions.CreateItem(ctx, pk, item, nil); err != nil {
		panic(err)
	}

	read := func() string {
		_, err := sessions.ReadItem(ctx, pk, "s1", nil)
		var re *azcore.ResponseError
		if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
			return "gone"
		}
		if err != nil {
			panic(err)
		}
		return "there"
	}
	fmt.Println("now:", read())
	srv.Advance(59 * time.Minute)
	fmt.Println("after 59 minutes:", read())
	srv.Advance(time.Minute)
	fmt.Println("after an hour:", read())
	// Output:
	// now: there
	// after 59 minutes: there
	// after an hour: gone
}
