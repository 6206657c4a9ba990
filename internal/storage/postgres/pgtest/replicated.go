package pgtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ebbdb/ebb/internal/clock"
)

// EnvBinDir names the variable holding the directory of PostgreSQL's
// server programs (initdb, pg_ctl, pg_basebackup); .ci/postgres.sh
// prints it next to EnvURL.
const EnvBinDir = "EBB_TEST_POSTGRES_BINDIR"

// Replicated is a PostgreSQL primary with one streaming standby that it
// replicates to synchronously (synchronous_standby_names = '*'), both on
// loopback, in a directory of their own: a commit is acknowledged only
// once the standby has flushed it, so promoting the standby loses no
// acknowledged transaction.
type Replicated struct {
	// PrimaryPort and StandbyPort are the servers' TCP ports on 127.0.0.1.
	PrimaryPort, StandbyPort int

	bin, dir string
	tb       testing.TB
}

// StartReplicated starts a primary and its synchronous standby, skipping
// the test when EnvBinDir is unset. Both are stopped, and their files
// removed, when the test ends.
func StartReplicated(tb testing.TB) *Replicated {
	bin := os.Getenv(EnvBinDir)
	if bin == "" {
		tb.Skipf("%s is not set; .ci/postgres.sh prints it", EnvBinDir)
	}
	dir, err := os.MkdirTemp("", "ebb-pg-replicated-*")
	if err != nil {
		tb.Fatal(err)
	}
	r := &Replicated{bin: bin, dir: dir, tb: tb, PrimaryPort: freePort(tb), StandbyPort: freePort(tb)}
	tb.Cleanup(func() {
		for _, d := range []string{"primary", "standby"} {
			if _, err := os.Stat(filepath.Join(dir, d, "postmaster.pid")); err == nil {
				r.run("pg_ctl", "-D", filepath.Join(dir, d), "-m", "immediate", "stop")
			}
		}
		os.RemoveAll(dir)
	})
	// initdb and postgres refuse to run as root: hand the directory to
	// the postgres user and run the programs as that user.
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			tb.Fatalf("running as root needs a postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			tb.Fatal(err)
		}
	}
	primary, standby := filepath.Join(dir, "primary"), filepath.Join(dir, "standby")
	r.run("initdb", "-D", primary, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8")
	// initdb's pg_hba.conf already lets local replication connections in
	// (trust, from 127.0.0.1).
	r.configure(primary, r.PrimaryPort, "wal_level = replica", "max_wal_senders = 4",
		"synchronous_standby_names = '*'", "synchronous_commit = on")
	r.start(primary)
	r.run("pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(r.PrimaryPort), "-U", "postgres",
		"-D", standby, "-R", "-X", "stream", "--checkpoint=fast")
	// The standby would inherit the primary's synchronous_standby_names,
	// and once promoted, with no standby of its own, would wait forever
	// on every commit.
	r.configure(standby, r.StandbyPort, "synchronous_standby_names = ''")
	r.start(standby)
	// Until the primary counts the standby as synchronous, its commits
	// do not wait for it.
	wall := clock.NewSystem()
	deadline := wall.Elapsed() + 30*time.Second
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		var state string
		err := r.query(r.PrimaryPort, "SELECT coalesce(max(sync_state), '') FROM pg_stat_replication", &state)
		if err == nil && state == "sync" {
			return r
		}
		if wall.Elapsed() > deadline {
			tb.Fatalf("the standby did not become synchronous (state %q, %v)", state, err)
		}
		<-tick.C
	}
}

// URL is the multi-host connection string a node gives Ebb: both servers,
// and target_session_attrs=read-write, so that the driver connects to
// whichever of them accepts writes.
func (r *Replicated) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/postgres?sslmode=disable&target_session_attrs=read-write&connect_timeout=2",
		r.PrimaryPort, r.StandbyPort)
}

// KillPrimary stops the primary at once, as a crash would: no checkpoint,
// every connection dropped.
func (r *Replicated) KillPrimary() {
	r.run("pg_ctl", "-D", filepath.Join(r.dir, "primary"), "-m", "immediate", "stop")
}

// PromoteStandby makes the standby a primary and waits until it accepts
// writes.
func (r *Replicated) PromoteStandby() {
	r.run("pg_ctl", "-D", filepath.Join(r.dir, "standby"), "-w", "promote")
}

func (r *Replicated) configure(data string, port int, settings ...string) {
	conf := append([]string{
		"listen_addresses = '127.0.0.1'",
		"port = " + strconv.Itoa(port),
		"unix_socket_directories = '" + r.dir + "'",
		"max_connections = 100",
	}, settings...)
	f, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		r.tb.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("\n" + strings.Join(conf, "\n") + "\n"); err != nil {
		r.tb.Fatal(err)
	}
}

func (r *Replicated) start(data string) {
	r.run("pg_ctl", "-D", data, "-l", data+".log", "-w", "-t", "60", "start")
}

// run runs one of PostgreSQL's programs, as the postgres user when the
// test runs as root.
func (r *Replicated) run(program string, args ...string) {
	r.tb.Helper()
	path := filepath.Join(r.bin, program)
	if os.Geteuid() == 0 {
		args = append([]string{"-u", "postgres", "--", path}, args...)
		path = "runuser"
	}
	out, err := exec.Command(path, args...).CombinedOutput()
	if err != nil {
		r.tb.Fatalf("%s %s: %v\n%s", program, strings.Join(args, " "), err, out)
	}
}

func (r *Replicated) query(port int, sql string, dst any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.QueryRow(ctx, sql).Scan(dst)
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(tb testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
