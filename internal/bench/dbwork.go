package bench

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// dbWork is what the database did during some upserts: the CPU time of
// its processes and the bytes of WAL it wrote. Either may be unknown (the
// database on another machine, or one that is not PostgreSQL).
type dbWork struct {
	cpu            time.Duration
	wal            int64
	hasCPU, hasWAL bool
}

func (w dbWork) sub(before dbWork) dbWork {
	return dbWork{
		cpu: w.cpu - before.cpu, wal: w.wal - before.wal,
		hasCPU: w.hasCPU && before.hasCPU, hasWAL: w.hasWAL && before.hasWAL,
	}
}

// DBWork is what the database did per upsert, where it could be read.
type DBWork struct {
	CPUPerUpsert   time.Duration // CPU time of the PostgreSQL processes on this machine
	WALPerUpsert   float64       // bytes of WAL written
	HasCPU, HasWAL bool
}

// dbTally adds up the database's work over rounds of upserts.
type dbTally struct {
	work    dbWork
	upserts int
	rounds  int
}

func (t *dbTally) add(w dbWork, upserts int) {
	if t.rounds == 0 {
		t.work = w
	} else {
		t.work = dbWork{
			cpu: t.work.cpu + w.cpu, wal: t.work.wal + w.wal,
			hasCPU: t.work.hasCPU && w.hasCPU, hasWAL: t.work.hasWAL && w.hasWAL,
		}
	}
	t.upserts += upserts
	t.rounds++
}

func (t *dbTally) perUpsert() DBWork {
	if t.upserts == 0 {
		return DBWork{}
	}
	n := int64(t.upserts)
	return DBWork{
		CPUPerUpsert: t.work.cpu / time.Duration(n),
		WALPerUpsert: float64(t.work.wal) / float64(n),
		HasCPU:       t.work.hasCPU,
		HasWAL:       t.work.hasWAL,
	}
}

// dbProbe reads the database's work so far: the CPU time of the
// PostgreSQL processes on this machine (Linux's /proc; a database
// elsewhere shows none) and its WAL insert position in bytes. Both count
// the whole database server, so they mean something only while one
// configuration is writing to it, as in the cluster benchmark's rounds.
type dbProbe struct {
	pool *pgxpool.Pool
}

func newDBProbe(ctx context.Context, url string) (*dbProbe, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &dbProbe{pool: pool}, nil
}

func (p *dbProbe) close() { p.pool.Close() }

func (p *dbProbe) read(ctx context.Context) dbWork {
	var w dbWork
	w.cpu, w.hasCPU = processCPU("postgres")
	// The insert position moves as WAL is written, where pg_stat_wal's
	// counts reach the view only when a backend next reports its
	// statistics, up to a second later.
	w.hasWAL = p.pool.QueryRow(ctx, "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint").Scan(&w.wal) == nil
	return w
}
