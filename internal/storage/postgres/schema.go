package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// migrations[v] takes the schema from version v to v+1. Append only; never
// edit one that has shipped. Each must be idempotent on its own (IF NOT
// EXISTS and the like): see the package doc.
var migrations = []string{
	// 0 → 1: the key/value table.
	`CREATE TABLE IF NOT EXISTS ebb_kv (key BYTEA PRIMARY KEY, value BYTEA NOT NULL)`,
}

const (
	sqlCreateVersion = `CREATE TABLE IF NOT EXISTS ebb_schema_version (id INT PRIMARY KEY, version INT NOT NULL)`
	sqlSeedVersion   = `INSERT INTO ebb_schema_version (id, version) VALUES (1, 0) ON CONFLICT (id) DO NOTHING`
	sqlReadVersion   = `SELECT version FROM ebb_schema_version WHERE id = 1`
	sqlLockVersion   = `SELECT version FROM ebb_schema_version WHERE id = 1 FOR UPDATE`
	sqlSetVersion    = `UPDATE ebb_schema_version SET version = $1 WHERE id = 1`
)

// schemaRaceAttempts bounds the retries of one schema step that lost a race
// with another process doing the same step.
const schemaRaceAttempts = 10

// migrate brings the schema up to len(migrations). On a database that is
// already current it costs one query.
func (s *Store) migrate(ctx context.Context) error {
	latest := len(migrations)
	var version int
	err := s.pool.QueryRow(ctx, sqlReadVersion).Scan(&version)
	switch {
	case err == nil:
	case isCode(err, "42P01") || errors.Is(err, pgx.ErrNoRows): // undefined_table, or no row yet
		err := s.retrySchemaRace(ctx, func() error {
			if _, err := s.pool.Exec(ctx, sqlCreateVersion); err != nil {
				return err
			}
			_, err := s.pool.Exec(ctx, sqlSeedVersion)
			return err
		})
		if err != nil {
			return fmt.Errorf("create ebb_schema_version: %w", err)
		}
	default:
		return err
	}
	for version < latest {
		err := s.retrySchemaRace(ctx, func() error {
			var err error
			version, err = s.migrateStep(ctx)
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate schema from version %d: %w", version, err)
		}
	}
	if version > latest {
		return fmt.Errorf("schema version %d is newer than this build of ebb understands (%d)", version, latest)
	}
	return nil
}

// migrateStep applies the next migration, if no other process has, and
// returns the version the schema is at afterwards. The row lock makes
// concurrent migrators take turns; a loser sees the new version on retry.
func (s *Store) migrateStep(ctx context.Context) (version int, err error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable})
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(ctx)
	if err := tx.QueryRow(ctx, sqlLockVersion).Scan(&version); err != nil {
		return 0, err
	}
	if version >= len(migrations) {
		return version, tx.Commit(ctx)
	}
	if _, err := tx.Exec(ctx, migrations[version]); err != nil {
		return version, err
	}
	if _, err := tx.Exec(ctx, sqlSetVersion, version+1); err != nil {
		return version, err
	}
	if err := tx.Commit(ctx); err != nil {
		return version, err
	}
	return version + 1, nil
}

// retrySchemaRace runs step until it does not fail with an error that
// means another process did the same thing at the same moment.
func (s *Store) retrySchemaRace(ctx context.Context, step func() error) error {
	for attempt := 1; ; attempt++ {
		err := step()
		if err == nil || !schemaRace(err) || attempt == schemaRaceAttempts {
			return err
		}
		if err := backoff(ctx, attempt); err != nil {
			return err
		}
	}
}

// schemaRace reports the errors of concurrent IF NOT EXISTS creation and
// of concurrent migrators.
func schemaRace(err error) bool {
	return retryable(err) ||
		isCode(err, "23505") || // unique_violation, e.g. on pg_type when two CREATE TABLEs race
		isCode(err, "42P07") || // duplicate_table
		isCode(err, "42710") // duplicate_object
}

func isCode(err error, code string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code
}
