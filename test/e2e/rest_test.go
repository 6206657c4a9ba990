package e2e

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/clock"
)

// restClient sends signed REST requests the Go SDK cannot make (the
// all-versions-and-deletes feed, start-from-now, container policies it
// has no field for, bulk).
type restClient struct {
	e    *env
	http *http.Client
	key  *auth.Verifier
}

func newRest(t testing.TB, e *env) *restClient {
	t.Helper()
	v, err := auth.NewVerifier(auth.EmulatorKey)
	if err != nil {
		t.Fatal(err)
	}
	c := insecureTransport()
	// Registered after the server's cleanup, so it runs first: the
	// server then has no idle connection to wait for.
	t.Cleanup(c.CloseIdleConnections)
	return &restClient{e: e, http: c, key: v}
}

type restResponse struct {
	status int
	header http.Header
	body   []byte
}

// do sends method path (escaped) with headers and body.
func (rc *restClient) do(t testing.TB, method, path string, hdr map[string]string, body []byte) restResponse {
	t.Helper()
	resType, link, err := auth.ResourceOf(path)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, strings.TrimSuffix(rc.e.srv.URL, "/")+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	date := clock.NewSystem().Now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("x-ms-version", "2020-07-15")
	req.Header.Set("Authorization", rc.key.Sign(method, resType, link, date))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := rc.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return restResponse{status: resp.StatusCode, header: resp.Header, body: b}
}
