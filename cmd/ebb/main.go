// Command ebb serves the Azure Cosmos DB NoSQL REST API with durable
// embedded storage, so the official SDKs connect to it as they connect to
// the Cosmos DB emulator.
//
//	go run ./cmd/ebb                 # https://localhost:8081/, data in ./ebb-data
//	go run ./cmd/ebb --memory --no-tls --clock-control
//
// Every flag can also be set with an EBB_* environment variable, e.g.
// EBB_LISTEN=127.0.0.1:9000.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/engine"
	"github.com/ebbdb/ebb/internal/script"
	"github.com/ebbdb/ebb/internal/server"
	"github.com/ebbdb/ebb/internal/storage/pebble"
)

func main() {
	err := run(os.Args[1:])
	switch {
	case errors.Is(err, flag.ErrHelp):
		// -h and --help asked for the usage, which the flag set printed.
	case err != nil:
		fmt.Fprintln(os.Stderr, "ebb:", err)
		os.Exit(1)
	}
}

// subcommands is every subcommand with its synopsis, for the usage text
// and `ebb help`.
var subcommands = []struct {
	name, args, what string
	run              func(args []string) error
}{
	{"bench", "[ttl|cluster|runaway] [flags]", "measure Ebb against a ceiling stub; the TTL, several-node and runaway-query workloads", runBench},
	{"clock", "[advance D | set T]", "show or move a --clock-control server's clock", adminCommand("clock")},
	{"ttl", "status DB/CONTAINER", "a container's TTL settings, purge backlog and upcoming expiries", adminCommand("ttl")},
	{"ls", "", "databases and containers with item counts and TTL settings", adminCommand("ls")},
	{"partitions", "[split] DB/CONTAINER [RANGE]", "a container's physical partitions with their items and bytes, or split one", adminCommand("partitions")},
	{"export", "[--out PATH] [DB[/CONTAINER]]", "items as NDJSON, or databases with their container definitions, from a running server", adminCommand("export")},
	{"import", "[--to DB/CONTAINER | --cosmium] SOURCE", "an export, an NDJSON or JSON array file, or a cosmium state file, into a running server", adminCommand("import")},
	{"backup", "DIR", "a consistent snapshot of a running server's embedded store, taken while it serves", adminCommand("backup")},
	{"restore", "[--data-dir NEW] DIR", "make a data directory of a backup", func(args []string) error { return runRestore(args, os.Stdout) }},
	{"version", "", "print Ebb's version", runVersion},
}

func adminCommand(name string) func(args []string) error {
	return func(args []string) error { return adminCommands[name](args, os.Stdout) }
}

// usage prints how to run ebb: the subcommands, and every flag with the
// environment variable that sets it too.
func usage(fs *flag.FlagSet) func() {
	return func() {
		w := fs.Output()
		line := func(args, what string) { fmt.Fprintf(w, "  ebb %-38s %s\n", args, what) }
		fmt.Fprint(w, "Usage:\n")
		line("[flags]", "serve the Cosmos DB API (https://localhost:8081/, data in ./ebb-data)")
		for _, c := range subcommands {
			line(strings.TrimSpace(c.name+" "+c.args), c.what)
		}
		line("help [SUBCOMMAND]", "this text, or a subcommand's flags")
		fmt.Fprint(w, "\nclock, ttl, ls, export, import and backup talk to a running server and sign for you (--endpoint, --key, --json);\n`ebb help SUBCOMMAND` lists a subcommand's flags.\n\nFlags (each may also be set by the environment variable shown):\n")
		fs.VisitAll(func(f *flag.Flag) {
			name, help := flag.UnquoteUsage(f)
			def, help := shownDefault(f, help)
			if v, ok := os.LookupEnv(envName(f.Name)); ok {
				def = v + ", from " + envName(f.Name)
			}
			fmt.Fprintf(w, "  --%s %s\t(%s)\n    \t%s (default %s)\n", f.Name, name, envName(f.Name), help, def)
		})
	}
}

// shownDefault is a flag's default as people read it, and its usage
// without that default: a usage ending in "(default: X)" names its own,
// which the flag's zero value cannot say.
func shownDefault(f *flag.Flag, usage string) (def, rest string) {
	if i := strings.LastIndex(usage, " (default: "); i >= 0 && strings.HasSuffix(usage, ")") {
		return usage[i+len(" (default: ") : len(usage)-1], usage[:i]
	}
	switch f.DefValue {
	case "false":
		return "off", usage
	case "":
		return "none", usage
	}
	return f.DefValue, usage
}

// envName is the environment variable that sets flag name.
func envName(name string) string {
	return "EBB_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// serveFlags declares the server's flags on a new flag set; the values
// land in cfg and logLevel.
func serveFlags(cfg *server.Config, logLevel *string) *flag.FlagSet {
	fs := flag.NewFlagSet("ebb", flag.ContinueOnError)
	fs.StringVar(&cfg.Listen, "listen", "127.0.0.1:8081", "`address` to listen on")
	fs.StringVar(&cfg.DataDir, "data-dir", "ebb-data", "`directory` for durable storage (Pebble)")
	fs.BoolVar(&cfg.Memory, "memory", false, "keep everything in memory (no disk; for tests)")
	fs.StringVar(&cfg.Store, "store", "", "postgres:// `URL` of a PostgreSQL-wire database shared by several Ebb nodes (default: embedded storage in --data-dir)")
	fs.IntVar(&cfg.PGMaxConns, "pg-max-conns", 0, "PostgreSQL connection pool size (default: the larger of 4 and the CPU count)")
	fs.DurationVar(&cfg.PGStatementTimeout, "pg-statement-timeout", 30*time.Second, "PostgreSQL statement timeout")
	fs.StringVar(&cfg.NodeID, "node-id", "", "this node's name in TTL purge leases on a shared --store (default: random)")
	fs.DurationVar(&cfg.LeaseTime, "ttl-lease", 5*time.Second, "how long a node's TTL purge leases on a container's partitions last on a shared --store")
	fs.BoolVar(&cfg.NoTLS, "no-tls", false, "serve plain HTTP instead of HTTPS")
	fs.StringVar(&cfg.TLSCert, "tls-cert", "", "PEM certificate `file` (default: a self-signed one kept in the data directory, or with --memory or --store in the user's configuration directory)")
	fs.StringVar(&cfg.TLSKey, "tls-key", "", "PEM private key `file` for --tls-cert")
	fs.StringVar(&cfg.Key, "key", auth.EmulatorKey, "primary master key, base64 (default: the emulator's well-known key)")
	fs.StringVar(&cfg.SecondaryKey, "secondary-key", "", "secondary read-write master key, base64, for rolling keys without downtime")
	fs.StringVar(&cfg.ReadOnlyKey, "readonly-key", "", "primary read-only key, base64: it may read, query and read feeds, and nothing else")
	fs.StringVar(&cfg.SecondaryReadOnlyKey, "secondary-readonly-key", "", "secondary read-only key, base64")
	fs.StringVar(&cfg.KeyFile, "key-file", "", "`file` of keys instead of the key flags, one NAME=KEY per line (primary, secondary, readonly, secondary-readonly); read again when it changes and on SIGHUP")
	fs.StringVar(&cfg.Advertise, "advertise", "", "endpoint `URL` that GET / advertises (default: the scheme and Host of each request)")
	fs.BoolVar(&cfg.ClockControl, "clock-control", false, "run on a manual clock that POST /_ebb/clock and ebb clock move (for tests)")
	fs.BoolVar(&cfg.AcceptAAD, "accept-aad", false, "accept AAD bearer tokens without verifying them, as the emulator does")
	fs.BoolVar(&cfg.DisablePurger, "disable-purger", false, "never purge expired items (they stay invisible); for tests of unpurged state")
	fs.BoolVar(&cfg.CheckOnShutdown, "check-on-exit", false, "when stopped, check that documents, expiry keys, index entries and feed agree, and exit with status 1 listing what does not (for tests)")
	fs.BoolVar(&cfg.EnforceThroughput, "enforce-throughput", false, "answer requests beyond their offer's RU/s with 429 and x-ms-retry-after-ms")
	fs.Float64Var(&cfg.PurgeFloor, "ttl-purge-floor", 0.05, "share of an offer's RU/s the TTL purger may always use, however busy the container")
	fs.DurationVar(&cfg.ClockGrace, "ttl-clock-grace", 10*time.Minute, "how long a forward wall-clock jump is distrusted before Ebb's time (visibility, _ts, purge) follows it")
	fs.DurationVar(&cfg.QueryPageBudget, "query-page-budget", engine.DefaultQueryPageBudget, "execution time of one query page: a page that runs out returns its rows so far with a continuation, or 408 when the query must see every item before returning any")
	fs.DurationVar(&cfg.ScriptBudgets.Time, "script-time-budget", script.DefaultBudgets.Time, "longest a stored procedure may run: one that runs out is stopped, commits nothing and answers 408 (its operations stop being accepted at 80% of it)")
	fs.Int64Var(&cfg.ScriptBudgets.Memory, "script-memory-budget", script.DefaultBudgets.Memory, "`bytes` the heap may grow by while a stored procedure runs before it is stopped")
	fs.IntVar(&cfg.ScriptBudgets.Operations, "script-max-operations", script.DefaultBudgets.Operations, "document operations one stored procedure run may start; past it they are not accepted (return false)")
	fs.Int64Var(&cfg.PartitionSplitSize, "partition-split-size", engine.DefaultSplitSize, "`bytes` of documents past which a physical partition is split in two in the background, as the service splits one past 50 GB; 0 never splits by size")
	fs.IntVar(&cfg.RowCacheSize, "row-cache-size", pebble.DefaultRowCacheSize, "`bytes` of recently point-read items (keys and values) the embedded store keeps in memory, exact under every write; 0 turns the cache off")
	fs.StringVar(&cfg.MetricsListen, "metrics-listen", "", "serve Prometheus /metrics on this `address`, without a key, instead of on the API listener (where it needs the master key); keep it on loopback or a private network")
	fs.DurationVar(&cfg.Timeouts.ReadHeader, "read-header-timeout", server.DefaultTimeouts.ReadHeader, "longest a connection may take over the TLS handshake and a request's headers")
	fs.DurationVar(&cfg.Timeouts.Read, "read-timeout", server.DefaultTimeouts.Read, "longest a connection may take to send a whole request, body included (size it for the largest documents over the slowest link)")
	fs.DurationVar(&cfg.Timeouts.Write, "write-timeout", server.DefaultTimeouts.Write, "longest from the end of a request's headers to the end of its response; must exceed --read-timeout")
	fs.DurationVar(&cfg.Timeouts.Idle, "idle-timeout", server.DefaultTimeouts.Idle, "longest a kept-alive connection may wait for its next request")
	fs.IntVar(&cfg.MaxConnections, "max-connections", server.DefaultMaxConnections, "most connections each listener holds open at once; more wait to be accepted")
	fs.StringVar(logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.BoolVar(&cfg.AccessLog, "access-log", false, "log every request at info (method, path, status, time taken, remote address); without it only rejected requests (401, 403) are")
	fs.Usage = usage(fs)
	return fs
}

// runHelp is `ebb help [SUBCOMMAND]`: the usage, or the subcommand's.
func runHelp(args []string) error {
	if len(args) > 1 {
		return fmt.Errorf("help: name one subcommand; got %q", args)
	}
	if len(args) == 0 || args[0] == "help" {
		var cfg server.Config
		fs := serveFlags(&cfg, new(string))
		fs.SetOutput(os.Stdout)
		fs.Usage()
		return nil
	}
	for _, c := range subcommands {
		if c.name == args[0] {
			if err := c.run([]string{"--help"}); !errors.Is(err, flag.ErrHelp) {
				return err
			}
			return nil
		}
	}
	return fmt.Errorf("help: no subcommand %q; `ebb help` lists them", args[0])
}

// checkFlagsApply refuses a setting, from the command line or the
// environment, that the rest of the configuration would leave unused:
// Ebb never quietly ignores what it was told. Given together, --memory
// and --store, say, left one ignored, and a server the user meant to
// keep its data lost it on restart. set names the settings given, by
// flag name.
func checkFlagsApply(set map[string]bool, cfg *server.Config) error {
	name := func(flag string) string { return fmt.Sprintf("--%s (%s)", flag, envName(flag)) }
	if cfg.Memory && cfg.Store != "" {
		return fmt.Errorf("%s and %s each choose the storage; give one", name("memory"), name("store"))
	}
	for _, rule := range []struct {
		flags   []string
		applies bool
		why     string
	}{
		{[]string{"data-dir"}, !cfg.Memory && cfg.Store == "", "is the embedded store's directory, which --memory and --store do not use"},
		{[]string{"row-cache-size"}, cfg.Store == "", "sizes the embedded store's cache, which --store does not use"},
		{[]string{"pg-max-conns", "pg-statement-timeout", "node-id", "ttl-lease"}, cfg.Store != "", "applies only to a shared PostgreSQL database (--store)"},
		{[]string{"tls-cert", "tls-key"}, !cfg.NoTLS, "is for HTTPS, which --no-tls turns off"},
	} {
		for _, f := range rule.flags {
			if set[f] && !rule.applies {
				return fmt.Errorf("%s %s; leave it out", name(f), rule.why)
			}
		}
	}
	return nil
}

func run(args []string) error {
	if len(args) > 0 && args[0] == "help" {
		return runHelp(args[1:])
	}
	if len(args) > 0 {
		for _, c := range subcommands {
			if args[0] == c.name {
				return c.run(args[1:])
			}
		}
	}
	var cfg server.Config
	logLevel := new(string)
	fs := serveFlags(&cfg, logLevel)
	var envErr error
	set := map[string]bool{} // the settings given, in the environment or as flags
	fs.VisitAll(func(f *flag.Flag) {
		if v, ok := os.LookupEnv(envName(f.Name)); ok && envErr == nil {
			set[f.Name] = true
			if err := f.Value.Set(v); err != nil {
				envErr = fmt.Errorf("%s=%q is not a valid value for --%s: %v", envName(f.Name), v, f.Name, err)
			}
		}
	})
	if envErr != nil {
		return envErr
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q; `ebb help` lists the subcommands", fs.Arg(0))
	}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := checkFlagsApply(set, &cfg); err != nil {
		return err
	}
	if cfg.QueryPageBudget <= 0 {
		return fmt.Errorf("--query-page-budget must be positive; got %v", cfg.QueryPageBudget)
	}
	if cfg.ScriptBudgets.Time <= 0 || cfg.ScriptBudgets.Memory <= 0 || cfg.ScriptBudgets.Operations <= 0 {
		return fmt.Errorf("--script-time-budget, --script-memory-budget and --script-max-operations must be positive; got %v, %d and %d", cfg.ScriptBudgets.Time, cfg.ScriptBudgets.Memory, cfg.ScriptBudgets.Operations)
	}
	if err := zeroMeansNone("row-cache-size", "off", &cfg.RowCacheSize); err != nil {
		return err
	}
	if err := zeroMeansNone("partition-split-size", "never", &cfg.PartitionSplitSize); err != nil {
		return err
	}
	if cfg.PurgeFloor <= 0 || cfg.PurgeFloor > 1 {
		return fmt.Errorf("--ttl-purge-floor must be in (0, 1]; got %v", cfg.PurgeFloor)
	}
	// Zero would mean "the default" to the server; on the command line
	// it reads as "no limit", which Ebb does not offer.
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"read-header-timeout", cfg.Timeouts.ReadHeader}, {"read-timeout", cfg.Timeouts.Read}, {"write-timeout", cfg.Timeouts.Write}, {"idle-timeout", cfg.Timeouts.Idle}} {
		if d.v <= 0 {
			return fmt.Errorf("--%s must be positive; got %v", d.flag, d.v)
		}
	}
	if cfg.MaxConnections <= 0 {
		return fmt.Errorf("--max-connections must be positive; got %d", cfg.MaxConnections)
	}
	if cfg.KeyFile != "" && (cfg.Key != auth.EmulatorKey || cfg.SecondaryKey != "" || cfg.ReadOnlyKey != "" || cfg.SecondaryReadOnlyKey != "") {
		return fmt.Errorf("give the keys either in --key-file or with --key, --secondary-key, --readonly-key and --secondary-readonly-key, not both")
	}
	if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
		return fmt.Errorf("--tls-cert and --tls-key go together")
	}
	if !cfg.NoTLS && cfg.TLSCert == "" && (cfg.Memory || cfg.Store != "") {
		// Without a data directory, the certificate lives with the user's
		// configuration, so that one trusted once keeps working.
		if dir, err := os.UserConfigDir(); err == nil {
			cfg.CertDir = filepath.Join(dir, "ebb")
		}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	cfg.Logger = logger

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := server.Start(ctx, cfg)
	if err != nil {
		return err
	}
	printBanner(cfg, srv)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for waiting := true; waiting; {
		select {
		case <-ctx.Done():
			waiting = false
		case <-hup:
			srv.ReloadKeys() // logs what it did
		case err := <-srv.Done():
			return err
		}
	}
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

func printBanner(cfg server.Config, srv *server.Server) {
	endpoint := srv.URL
	if host, port, err := net.SplitHostPort(srv.Addr().String()); err == nil && (host == "127.0.0.1" || host == "::1") {
		scheme := "https"
		if cfg.NoTLS {
			scheme = "http"
		}
		endpoint = fmt.Sprintf("%s://localhost:%s/", scheme, port)
	}
	storage := "durable storage in " + cfg.DataDir
	switch {
	case cfg.Store != "":
		storage = "shared PostgreSQL storage"
	case cfg.Memory:
		storage = "in-memory storage (nothing is kept)"
	}
	fmt.Printf("Ebb is serving the Cosmos DB NoSQL API at %s with %s.\n", endpoint, storage)
	if cfg.KeyFile != "" {
		fmt.Printf("Keys: from %s (read again when it changes and on SIGHUP).\n", cfg.KeyFile)
	} else {
		fmt.Printf("Connection string: AccountEndpoint=%s;AccountKey=%s;\n", endpoint, cfg.Key)
	}
	fmt.Printf("Explorer: %s_explorer/ (a browser opening %s goes there)\n", endpoint, endpoint)
	if !cfg.NoTLS {
		fmt.Printf("TLS uses a self-signed certificate: download it from %s_explorer/emulator.pem and trust it\n", endpoint)
		fmt.Println("(SSL_CERT_FILE for Go, NODE_EXTRA_CA_CERTS for Node.js), or skip verification in test clients, or run with --no-tls.")
	}
	if cfg.ClockControl {
		fmt.Printf("Clock control is on: POST %s_ebb/clock {\"advanceSeconds\": n} moves server time.\n", endpoint)
	}
}

// flagsMarkdown is the README's table of the server's flags, made from the
// flag set itself so the two cannot disagree (TestREADMEFlags).
func flagsMarkdown() string {
	var cfg server.Config
	fs := serveFlags(&cfg, new(string))
	var b strings.Builder
	b.WriteString("| flag | env | default | meaning |\n|---|---|---|---|\n")
	fs.VisitAll(func(f *flag.Flag) {
		name, help := flag.UnquoteUsage(f)
		def, help := shownDefault(f, help)
		if def == f.DefValue {
			def = "`" + def + "`"
		}
		arg := ""
		if name != "" {
			arg = " " + name
		}
		fmt.Fprintf(&b, "| `--%s%s` | `%s` | %s | %s |\n", f.Name, arg, envName(f.Name), def, strings.ReplaceAll(help, "|", `\|`))
	})
	return b.String()
}

// zeroMeansNone reads a size flag whose 0 means none on the command
// line (what none says) as the server reads it, where 0 is the default
// and a negative size none; a negative flag is refused.
func zeroMeansNone[T int | int64](flag, none string, v *T) error {
	switch {
	case *v < 0:
		return fmt.Errorf("--%s must be 0 (%s) or positive; got %d", flag, none, *v)
	case *v == 0:
		*v = -1
	}
	return nil
}
