package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/ebbdb/ebb/internal/progress"
	"github.com/ebbdb/ebb/internal/storage/pebble"
)

// runBackup is `ebb backup DIR`: a consistent snapshot of a running
// server's embedded store, written into DIR as a store directory.
func runBackup(args []string, out io.Writer) error {
	fs := adminFlagSet("backup", `ebb backup [flags] DIR

Writes a consistent snapshot of a running Ebb's embedded store into DIR
(new or empty) while the server goes on serving. DIR is then a data
directory: ebb restore DIR --data-dir NEW makes a server's data directory
of it. A PostgreSQL store is backed up with PostgreSQL's own tools.`)
	client := adminFlags(fs)
	rest, err := parseArgs(fs, args, 1, 1, "one directory to write the backup into")
	if err != nil {
		return err
	}
	dir := rest[0]
	if err := checkEmptyDir(dir); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	c, err := client()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	resp, err := c.send(ctx, http.MethodGet, "/_ebb/backup", nil, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	meter := progress.New(os.Stderr, "backup")
	total, _ := strconv.ParseInt(resp.Header.Get("x-ebb-backup-bytes"), 10, 64)
	meter.SetTotals(0, total)
	body := pebble.CountingReader{R: resp.Body, Count: func(n int64) { meter.Add(0, n) }}
	if err := pebble.Restore(body, dir); err != nil {
		return fmt.Errorf("backup: %w (the directory %s is incomplete: delete it)", err, dir)
	}
	meter.Done("")
	_, err = fmt.Fprintf(out, "backup written to %s\n", dir)
	return err
}

// runRestore is `ebb restore DIR --data-dir NEW`.
func runRestore(args []string, out io.Writer) error {
	fs := adminFlagSet("restore", `ebb restore [--data-dir NEW] DIR

Makes a data directory of a backup DIR written by ebb backup, checking
that it opens. NEW (default ebb-data) must not exist or be empty: restore
never mixes a backup with other data. Then start Ebb on it:
ebb --data-dir NEW.`)
	dataDir := fs.String("data-dir", envOr("EBB_DATA_DIR", "ebb-data"), "the data directory to make (EBB_DATA_DIR)")
	rest, err := parseArgs(fs, args, 1, 1, "one backup directory")
	if err != nil {
		return err
	}
	if err := checkEmptyDir(*dataDir); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	total, err := pebble.ArchiveSize(rest[0])
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	meter := progress.New(os.Stderr, "restore")
	meter.SetTotals(0, total)
	err = pebble.RestoreDir(context.Background(), rest[0], *dataDir, func(n int64) { meter.Add(0, n) })
	if err != nil {
		return err
	}
	meter.Done("")
	_, err = fmt.Fprintf(out, "restored %s into %s; start Ebb with --data-dir %s\n", rest[0], *dataDir, *dataDir)
	return err
}

// checkEmptyDir refuses a directory that holds anything.
func checkEmptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return err
	case len(entries) > 0:
		return fmt.Errorf("%s is not empty; name a new directory", dir)
	}
	return nil
}
