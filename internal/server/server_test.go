package server

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/clock"
)

// startTest starts an in-memory server on a loopback port for one test.
func startTest(t *testing.T, cfg Config) *Server {
	t.Helper()
	cfg.Listen, cfg.Memory = "127.0.0.1:0", true
	cfg.Logger = slog.New(slog.DiscardHandler)
	s, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s
}

// wall is the clock requests are signed with and safety deadlines
// are set by.
var wall = clock.NewSystem()

// signedHeaders are the headers of a request for a feed of resType
// under link, signed with the emulator key.
func signedHeaders(t *testing.T, verb, resType, link string) string {
	t.Helper()
	v, err := auth.NewVerifier(auth.EmulatorKey)
	if err != nil {
		t.Fatal(err)
	}
	date := wall.Now().UTC().Format(http.TimeFormat)
	return "x-ms-date: " + date + "\r\nauthorization: " + v.Sign(verb, resType, link, date) + "\r\n"
}
