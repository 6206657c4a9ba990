package pebble

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/ebbdb/ebb/internal/storage"
)

var _ storage.Backuper = (*Store)(nil)

// backupDir, inside a store's directory, holds the checkpoints of backups
// in progress. Pebble ignores what it does not name itself.
const backupDir = "ebb-backups"

// Backup implements storage.Backuper. It takes a Pebble checkpoint (a
// consistent view whose files are hard links, so it costs almost nothing
// and writes go on meanwhile) into the store's directory, streams it as a
// tar archive, and removes it.
func (s *Store) Backup(ctx context.Context, w io.Writer, sizeHint func(int64)) error {
	if s.inMemory {
		return fmt.Errorf("pebble: an in-memory store keeps nothing to back up: %w", errors.ErrUnsupported)
	}
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.exit()
	parent := filepath.Join(s.dir, backupDir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "checkpoint-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// Checkpoint wants a directory that does not exist yet.
	dir := filepath.Join(tmp, "store")
	if err := s.db.Checkpoint(dir, pebble.WithFlushedWAL()); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	total, err := ArchiveSize(dir)
	if err != nil {
		return err
	}
	if sizeHint != nil {
		sizeHint(total)
	}
	return writeTar(ctx, dir, w)
}

// ArchiveSize is the size of the tar archive of dir that writeTar writes
// (for progress): a 512-byte header per entry, each file's bytes padded
// to 512, and two empty blocks at the end.
func ArchiveSize(dir string) (int64, error) {
	var total int64 = 1024
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || path == dir {
			return err
		}
		total += 512
		if info.Mode().IsRegular() {
			total += (info.Size() + 511) / 512 * 512
		}
		return nil
	})
	return total, err
}

// writeTar writes the files under dir to w as a tar archive, with paths
// relative to dir.
func writeTar(ctx context.Context, dir string, w io.Writer) error {
	tw := tar.NewWriter(w)
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || path == dir {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(rel)
		if info.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// RestoreDir makes the store directory dst from a backup directory src
// (what `ebb backup` writes), as Restore does from an archive. copied, if
// set, is told of the bytes as they are copied.
func RestoreDir(ctx context.Context, src, dst string, copied func(n int64)) error {
	if err := isStore(src); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeTar(ctx, src, pw)) }()
	var r io.Reader = pr
	if copied != nil {
		r = CountingReader{R: pr, Count: copied}
	}
	err := Restore(r, dst)
	pr.CloseWithError(err)
	return err
}

// CountingReader tells Count how many bytes each Read returned.
type CountingReader struct {
	R     io.Reader
	Count func(n int64)
}

func (c CountingReader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.Count(int64(n))
	return n, err
}

// Restore makes the store directory dst from a backup archive read from
// r, then opens it once to check that it is a whole store. dst must not
// exist or be empty: a restore never mixes with other data.
func Restore(r io.Reader, dst string) error {
	if dst == "" {
		return errors.New("restore: no directory to restore into")
	}
	if entries, err := os.ReadDir(dst); err == nil && len(entries) > 0 {
		return fmt.Errorf("restore: %s is not empty; restore into a new directory", dst)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("restore: read backup: %w", err)
		}
		name := filepath.FromSlash(hdr.Name)
		// A backup holds the store's own files; anything reaching outside
		// dst is not one of Ebb's.
		if !filepath.IsLocal(name) {
			return fmt.Errorf("restore: the backup names %q, outside the store", hdr.Name)
		}
		path := filepath.Join(dst, name)
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if err == nil {
				err = f.Sync()
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("restore %s: %w", hdr.Name, err)
			}
		default:
			return fmt.Errorf("restore: the backup holds %q, which is not a file or directory", hdr.Name)
		}
	}
	// Open would make an empty store of a directory that holds none.
	if err := isStore(dst); err != nil {
		return fmt.Errorf("restore: the backup %w", err)
	}
	s, err := Open(dst)
	if err != nil {
		return fmt.Errorf("restore: the restored store does not open: %w", err)
	}
	return s.Close()
}

// isStore checks that dir holds a Pebble store.
func isStore(dir string) error {
	desc, err := pebble.Peek(dir, vfs.Default)
	if err != nil {
		return err
	}
	if !desc.Exists {
		return fmt.Errorf("holds no Ebb store: %s", dir)
	}
	return nil
}
