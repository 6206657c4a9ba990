package server

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/clock/clocktest"
)

// TestKeyFileWatched: a change to the key file is in force without
// SIGHUP, once the watcher has looked.
func TestKeyFileWatched(t *testing.T) {
	defer func(d time.Duration) { keyFilePoll = d }(keyFilePoll)
	keyFilePoll = 10 * time.Millisecond
	const newKey = "bmV3LWtleS1mb3ItdGVzdHMtbm5ubm5ubm5ubm5ubm4="
	file := filepath.Join(t.TempDir(), "keys")
	os.WriteFile(file, []byte("primary="+auth.EmulatorKey+"\n"), 0o600)
	s := startTest(t, Config{KeyFile: file})

	now := wall.Now()
	date := now.UTC().Format("Mon, 02 Jan 2006 15:04:05 GMT")
	signer, _ := auth.NewVerifier(newKey)
	sig := signer.Sign("GET", "dbs", "", date)
	if _, err := s.verifier.Verify("GET", "dbs", "", date, sig, now); err == nil {
		t.Fatal("a key not in the file signs")
	}
	// A different size, so the change shows even where file times are coarse.
	os.WriteFile(file, []byte("# rotated\nprimary="+newKey+"\n"), 0o600)
	clocktest.WaitUntil(t, "the watcher to take the new key file", func() bool {
		_, err := s.verifier.Verify("GET", "dbs", "", date, sig, now)
		return err == nil
	})
}
