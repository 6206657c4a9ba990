package bench

import (
	"errors"
	"testing"
)

// TestStatusOf: the report shows the server's message, not the SDK's
// request line and body around it.
func TestStatusOf(t *testing.T) {
	raw := "POST https://127.0.0.1:1/dbs/d/colls/c/docs\n----\nRESPONSE 400: 400 Bad Request\n" +
		`{"code":"BadRequest","message":"Message: {\"Errors\":[\"The SQL query text exceeded the maximum limit of 524288 characters.\"]}\r\nActivityId: a, Request URI: /dbs/d/colls/c/docs"}`
	if _, msg := statusOf(errors.New(raw)); msg != "The SQL query text exceeded the maximum limit of 524288 characters." {
		t.Errorf("statusOf = %q", msg)
	}
}
