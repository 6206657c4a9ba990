package server

import (
	"fmt"
	"os"
	"time"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/clock"
)

// Keys can be rotated without a restart: with Config.KeyFile, the file is
// read again when it changes (checked every keyFilePoll) and when
// ReloadKeys is called (cmd/ebb calls it on SIGHUP). A file that does not
// parse changes nothing and is logged, so a half-written edit never
// locks clients out.

// keyFilePoll is how often the key file is checked for a change (a
// variable for tests).
var keyFilePoll = 2 * time.Second

// keyFileStamp identifies a version of the key file.
type keyFileStamp struct {
	size    int64
	modTime time.Time
}

func readKeyFile(path string) (auth.Keys, keyFileStamp, error) {
	st, err := os.Stat(path)
	if err != nil {
		return auth.Keys{}, keyFileStamp{}, fmt.Errorf("--key-file: %w", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return auth.Keys{}, keyFileStamp{}, fmt.Errorf("--key-file: %w", err)
	}
	keys, err := auth.ParseKeyFile(data)
	if err != nil {
		return auth.Keys{}, keyFileStamp{}, fmt.Errorf("--key-file %s: %w", path, err)
	}
	return keys, keyFileStamp{st.Size(), st.ModTime()}, nil
}

// ReloadKeys reads the key file again and puts its keys in force for
// every request checked after it returns. Without a key file it does
// nothing.
func (s *Server) ReloadKeys() error {
	if s.cfg.KeyFile == "" {
		return nil
	}
	s.keyMu.Lock()
	defer s.keyMu.Unlock()
	keys, stamp, err := readKeyFile(s.cfg.KeyFile)
	if err == nil {
		err = s.verifier.SetKeys(keys)
	}
	if err != nil {
		s.cfg.Logger.Error("keys not reloaded; the previous keys stay in force", "err", err)
		return err
	}
	s.keyFile = stamp
	s.cfg.Logger.Info("keys reloaded", "file", s.cfg.KeyFile)
	return nil
}

// watchKeyFile reloads the keys when the key file changes, looking every
// poll, until Shutdown. Start reads keyFilePoll for it, so that a test
// may set the variable back while the watcher runs.
func (s *Server) watchKeyFile(c clock.Clock, poll time.Duration) {
	for {
		tick, cancel := c.After(poll)
		select {
		case <-s.stopWatch:
			cancel()
			return
		case <-tick:
		}
		st, err := os.Stat(s.cfg.KeyFile)
		if err != nil {
			continue // being replaced; the next look finds the new one
		}
		s.keyMu.Lock()
		changed := (keyFileStamp{st.Size(), st.ModTime()}) != s.keyFile
		s.keyMu.Unlock()
		if changed {
			s.ReloadKeys()
		}
	}
}
