package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/engine"
)

// The admin commands talk to a running Ebb over its API and sign each
// request with the key, so that nobody has to write a signing script to
// move the clock or look at TTL.

// adminCommands are the subcommands that talk to a running server.
var adminCommands = map[string]func(args []string, out io.Writer) error{
	"clock":      runClock,
	"ttl":        runTTL,
	"ls":         runLs,
	"partitions": runPartitions,
	"backup":     runBackup,
	"export":     runExport,
	"import":     runImport,
}

// adminClient sends signed requests to one server.
type adminClient struct {
	// clock dates each request's signature.
	clock    clock.Clock
	endpoint *url.URL
	signer   *auth.Verifier
	http     *http.Client
	json     bool
}

// adminFlags declares the flags every admin command takes and returns a
// function that makes the client once they are parsed.
func adminFlags(fs *flag.FlagSet) func() (*adminClient, error) {
	endpoint := fs.String("endpoint", envOr("EBB_ENDPOINT", "https://localhost:8081/"), "the server's endpoint (EBB_ENDPOINT)")
	key := fs.String("key", envOr("EBB_KEY", auth.EmulatorKey), "master key; the default is the emulator's well-known key (EBB_KEY)")
	caCert := fs.String("ca-cert", "", "PEM certificate to trust for the endpoint; a loopback endpoint's certificate is not checked, as with the emulator's")
	asJSON := fs.Bool("json", false, "print JSON instead of text for people")
	return func() (*adminClient, error) {
		u, err := url.Parse(*endpoint)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("--endpoint must be an http:// or https:// URL such as https://localhost:8081/; got %q", *endpoint)
		}
		signer, err := auth.NewVerifier(*key)
		if err != nil {
			return nil, fmt.Errorf("--key: %w", err)
		}
		tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
		switch {
		case *caCert != "":
			pem, err := os.ReadFile(*caCert)
			if err != nil {
				return nil, fmt.Errorf("--ca-cert: %w", err)
			}
			tlsConfig.RootCAs = x509.NewCertPool()
			if !tlsConfig.RootCAs.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--ca-cert: %s holds no PEM certificate", *caCert)
			}
		case isLoopback(u.Hostname()):
			// A local Ebb serves a self-signed certificate that the user
			// may not have trusted yet; nobody else can answer on loopback.
			tlsConfig.InsecureSkipVerify = true
		}
		transport := &http.Transport{TLSClientConfig: tlsConfig, ForceAttemptHTTP2: true, ResponseHeaderTimeout: time.Minute}
		return &adminClient{clock: clock.NewSystem(), endpoint: u, signer: signer, http: &http.Client{Transport: transport}, json: *asJSON}, nil
	}
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// apiError is a non-2xx answer, with the message of the service's error
// body when it has one.
type apiError struct {
	status  int
	message string
	// retryAfter is how long a 429 asks the client to wait.
	retryAfter time.Duration
}

func (e *apiError) Error() string {
	return fmt.Sprintf("the server answered %d: %s", e.status, e.message)
}

// send sends a signed request for path (escaped, without the endpoint's
// path) and returns a 2xx response, whose body the caller closes; any
// other answer is an *apiError with the service's message.
func (c *adminClient) send(ctx context.Context, method, path string, body []byte, header http.Header) (*http.Response, error) {
	escapedPath, _, _ := strings.Cut(path, "?") // a query string is not signed
	resType, link, err := auth.ResourceOf(escapedPath)
	if err != nil {
		return nil, err
	}
	u := *c.endpoint
	u.Path, u.RawPath = "", ""
	target := strings.TrimSuffix(u.String(), "/") + path
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	date := c.clock.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("x-ms-version", "2020-07-15")
	req.Header.Set("authorization", c.signer.Sign(method, resType, link, date))
	if body != nil && req.Header.Get("content-type") == "" {
		req.Header.Set("content-type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if c.endpoint.Scheme == "https" && strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") {
			return nil, fmt.Errorf("%w (the server runs with --no-tls: use --endpoint http://%s/)", err, c.endpoint.Host)
		}
		return nil, err
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(out, &e) != nil || e.Message == "" {
		e.Message = strings.TrimSpace(string(out))
	}
	e.Message = innerMessage(e.Message)
	ms, _ := strconv.ParseFloat(resp.Header.Get("x-ms-retry-after-ms"), 64)
	return nil, &apiError{status: resp.StatusCode, message: e.Message, retryAfter: time.Duration(ms * float64(time.Millisecond))}
}

// innerMessage is the text of a service error message, which wraps it
// as `Message: {"Errors":["…"]}` and then diagnostics.
func innerMessage(msg string) string {
	i := strings.Index(msg, "{")
	if !strings.HasPrefix(msg, "Message: ") || i < 0 {
		return msg
	}
	var inner struct{ Errors []string }
	if json.NewDecoder(strings.NewReader(msg[i:])).Decode(&inner) != nil || len(inner.Errors) == 0 {
		return msg
	}
	return strings.Join(inner.Errors, "; ")
}

// do is send for an answer read whole: the body of a 2xx answer and its
// headers, within a minute.
func (c *adminClient) do(ctx context.Context, method, path string, body []byte, header http.Header) ([]byte, http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	resp, err := c.send(ctx, method, path, body, header)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	// Admin answers are small; a status of a million containers is not.
	out, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, nil, err
	}
	return out, resp.Header, nil
}

// adminFlagSet is a flag set for an admin command with its usage text.
func adminFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("ebb "+name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s\n\nflags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseInterspersed parses args with fs, letting flags come before,
// between or after the positional arguments, which it returns.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// parseArgs parses a command's flags and checks that between min and
// max positional arguments remain; want says what they are, for the error
// that shows the usage otherwise.
func parseArgs(fs *flag.FlagSet, args []string, min, max int, want string) ([]string, error) {
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, err
	}
	if len(rest) < min || len(rest) > max {
		fs.Usage()
		return nil, fmt.Errorf("%s: expected %s; got %q", strings.TrimPrefix(fs.Name(), "ebb "), want, rest)
	}
	return rest, nil
}

// splitContainer reads DATABASE/CONTAINER.
func splitContainer(s string) (db, coll string, err error) {
	db, coll, ok := strings.Cut(s, "/")
	if !ok || db == "" || coll == "" || strings.Contains(coll, "/") {
		return "", "", fmt.Errorf("name the container as DATABASE/CONTAINER; got %q", s)
	}
	return db, coll, nil
}

// runClock is `ebb clock [advance DURATION | set TIME]`.
func runClock(args []string, out io.Writer) error {
	fs := adminFlagSet("clock", `ebb clock [flags]                 show the server's clock
       ebb clock [flags] advance 90m     move it forward (Go durations, or a number of seconds)
       ebb clock [flags] set 2027-01-01T00:00:00Z   set it (stepping back holds time still)

The server must run with --clock-control.`)
	client := adminFlags(fs)
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	c, err := client()
	if err != nil {
		return err
	}
	var body []byte
	method := http.MethodGet
	switch {
	case len(rest) == 0:
	case len(rest) == 2 && rest[0] == "advance":
		d, err := parseAdvance(rest[1])
		if err != nil {
			return err
		}
		method, body = http.MethodPost, []byte(`{"advanceSeconds":`+strconv.FormatFloat(d.Seconds(), 'f', -1, 64)+`}`)
	case len(rest) == 2 && rest[0] == "set":
		if _, err := time.Parse(time.RFC3339Nano, rest[1]); err != nil {
			return fmt.Errorf("clock set: %q is not an RFC 3339 time such as 2027-01-01T00:00:00Z", rest[1])
		}
		set, _ := json.Marshal(map[string]string{"set": rest[1]})
		method, body = http.MethodPost, set
	default:
		fs.Usage()
		return fmt.Errorf("clock: unexpected arguments %q", rest)
	}
	var clk struct {
		Now   string `json:"now"`
		Epoch int64  `json:"epochSeconds"`
	}
	done, err := c.fetch(out, method, "/_ebb/clock", body, &clk, "clock")
	var ae *apiError
	if errors.As(err, &ae) && ae.status == http.StatusNotFound {
		return errors.New("clock control is off: the server runs on the real clock (start it with --clock-control)")
	}
	if done {
		return err
	}
	_, err = fmt.Fprintf(out, "%s (epoch second %d)\n", clk.Now, clk.Epoch)
	return err
}

// parseAdvance reads a Go duration ("90m", "1h30m") or a number of
// seconds ("5400").
func parseAdvance(s string) (time.Duration, error) {
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		if secs < 0 || secs > 9e9 {
			return 0, fmt.Errorf("clock advance: %s seconds is not between 0 and 9e9", s)
		}
		return time.Duration(secs * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("clock advance: %q is neither a duration such as 90m or 1h30m nor a number of seconds", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("clock advance: the clock only moves forward; got %s", s)
	}
	return d, nil
}

// runTTL is `ebb ttl status DB/CONTAINER`.
func runTTL(args []string, out io.Writer) error {
	fs := adminFlagSet("ttl", `ebb ttl status [flags] DATABASE/CONTAINER

Shows a container's TTL settings, how many expired items wait for the
purger, when the next item expires and how many expire soon.`)
	client := adminFlags(fs)
	rest, err := parseArgs(fs, args, 2, 2, "`status DATABASE/CONTAINER`")
	if err != nil {
		return err
	}
	if rest[0] != "status" {
		fs.Usage()
		return fmt.Errorf("ttl: expected `status DATABASE/CONTAINER`; got %q", rest)
	}
	db, coll, err := splitContainer(rest[1])
	if err != nil {
		return fmt.Errorf("ttl status: %w", err)
	}
	c, err := client()
	if err != nil {
		return err
	}
	var st engine.TTLStatus
	if done, err := c.fetch(out, http.MethodGet, "/_ebb/containers/"+url.PathEscape(db)+"/"+url.PathEscape(coll)+"/ttl", nil, &st, "ttl status"); done {
		return err
	}
	atLeast := ""
	if st.CountsCapped {
		atLeast = "at least "
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "container\t%s/%s\n", db, coll)
	fmt.Fprintf(tw, "ttl\t%s\n", describeTTL(st.DefaultTTL))
	fmt.Fprintf(tw, "server time\t%s\n", st.Now)
	fmt.Fprintf(tw, "expired, not yet purged\t%s%d", atLeast, st.Backlog)
	if st.Backlog > 0 {
		fmt.Fprintf(tw, " (oldest expired %d s ago)", st.OldestUnpurgedAgeSeconds)
	}
	fmt.Fprintln(tw)
	next := "none"
	if st.NextDeadline != nil {
		next = *st.NextDeadline
	}
	fmt.Fprintf(tw, "next expiry\t%s\n", next)
	fmt.Fprintf(tw, "expiring within\tminute %s%d, hour %s%d, day %s%d, week %s%d\n", atLeast, st.Upcoming.Minute, atLeast, st.Upcoming.Hour, atLeast, st.Upcoming.Day, atLeast, st.Upcoming.Week)
	if st.PurgeLagSeconds != nil {
		fmt.Fprintf(tw, "latest purge lag\t%.3f s\n", *st.PurgeLagSeconds)
	}
	if st.LeaseHolder != "" {
		fmt.Fprintf(tw, "purging node\t%s\n", st.LeaseHolder)
	}
	return tw.Flush()
}

// runPartitions is `ebb partitions DB/CONTAINER`, and `ebb partitions
// split DB/CONTAINER RANGE`.
func runPartitions(args []string, out io.Writer) error {
	fs := adminFlagSet("partitions", `ebb partitions [flags] DATABASE/CONTAINER
ebb partitions [flags] split DATABASE/CONTAINER RANGE

Lists a container's physical partitions: each one's partition key range,
its items and the bytes of their documents, and its log's sequence
number, with the size past which a partition is split. With split,
splits the range now, in two at the middle of its hashes, while clients
read and write.`)
	client := adminFlags(fs)
	rest, err := parseArgs(fs, args, 1, 3, "`DATABASE/CONTAINER` or `split DATABASE/CONTAINER RANGE`")
	if err != nil {
		return err
	}
	split := rest[0] == "split"
	if split != (len(rest) == 3) || (!split && len(rest) != 1) {
		fs.Usage()
		return fmt.Errorf("partitions: expected `DATABASE/CONTAINER` or `split DATABASE/CONTAINER RANGE`; got %q", rest)
	}
	target := rest[0]
	if split {
		target = rest[1]
	}
	db, coll, err := splitContainer(target)
	if err != nil {
		return fmt.Errorf("partitions: %w", err)
	}
	c, err := client()
	if err != nil {
		return err
	}
	path := "/_ebb/containers/" + url.PathEscape(db) + "/" + url.PathEscape(coll)
	if split {
		body, _ := json.Marshal(map[string]string{"partitionKeyRangeId": rest[2]})
		var res struct {
			Children []string `json:"children"`
		}
		if done, err := c.fetch(out, http.MethodPost, path+"/split", body, &res, "partitions split"); done {
			return err
		}
		_, err = fmt.Fprintf(out, "range %s split into %s\n", rest[2], strings.Join(res.Children, " and "))
		return err
	}
	var rep engine.PartitionsStatus
	if done, err := c.fetch(out, http.MethodGet, path+"/partitions", nil, &rep, "partitions"); done {
		return err
	}
	splitAt := "never"
	if rep.SplitSize > 0 {
		splitAt = "past " + describeBytes(rep.SplitSize) + " of documents"
	}
	fmt.Fprintf(out, "container %s/%s, split %s\n", db, coll, splitAt)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RANGE\tMIN\tMAX\tPARENTS\tITEMS\tDOCUMENTS\tLSN")
	for _, p := range rep.Partitions {
		counted := ""
		if !p.Counted {
			counted = " (counting)"
		}
		fmt.Fprintf(tw, "%s\t%q\t%q\t%s\t%d%s\t%s\t%d\n", p.ID, p.MinInclusive, p.MaxExclusive, cmp.Or(strings.Join(p.Parents, ","), "-"), p.Items, counted, describeBytes(p.Bytes), p.LSN)
	}
	return tw.Flush()
}

// describeBytes writes a size for people: bytes, or KiB, MiB or GiB to
// one decimal.
func describeBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	v, i := float64(n)/unit, 0
	for ; v >= unit && i < 2; i++ {
		v /= unit
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + [...]string{"KiB", "MiB", "GiB"}[i]
}

// describeTTL says what a container's defaultTtl means.
func describeTTL(defaultTTL *int64) string {
	switch {
	case defaultTTL == nil:
		return "off"
	case *defaultTTL == -1:
		return "on, no default (items with a ttl expire)"
	default:
		return fmt.Sprintf("%d s by default", *defaultTTL)
	}
}

// lsEntry is one container in `ebb ls`.
type lsEntry struct {
	Database     string   `json:"database"`
	Container    string   `json:"container"`
	Items        int64    `json:"items"`
	DefaultTTL   *int64   `json:"defaultTtl"`
	PartitionKey []string `json:"partitionKeyPaths"`
}

// runLs is `ebb ls`: every database and container with its item count and
// TTL setting.
func runLs(args []string, out io.Writer) error {
	fs := adminFlagSet("ls", `ebb ls [flags]

Lists every database and container with its item count (items whose
time to live has run out are not counted) and TTL setting.`)
	client := adminFlags(fs)
	if _, err := parseArgs(fs, args, 0, 0, "no arguments"); err != nil {
		return err
	}
	c, err := client()
	if err != nil {
		return err
	}
	ctx := context.Background()
	dbIDs, err := c.databaseIDs(ctx)
	if err != nil {
		return err
	}
	entries := []lsEntry{}
	emptyDBs := []string{}
	for _, dbID := range dbIDs {
		var colls struct {
			Containers []struct {
				ID           string `json:"id"`
				DefaultTTL   *int64 `json:"defaultTtl"`
				PartitionKey struct {
					Paths []string `json:"paths"`
				} `json:"partitionKey"`
			} `json:"DocumentCollections"`
		}
		dbPath := "/dbs/" + url.PathEscape(dbID)
		if err := c.getJSON(ctx, dbPath+"/colls", &colls); err != nil {
			return err
		}
		if len(colls.Containers) == 0 {
			emptyDBs = append(emptyDBs, dbID)
		}
		for _, coll := range colls.Containers {
			n, err := c.count(ctx, dbPath+"/colls/"+url.PathEscape(coll.ID))
			if err != nil {
				return fmt.Errorf("count %s/%s: %w", dbID, coll.ID, err)
			}
			entries = append(entries, lsEntry{Database: dbID, Container: coll.ID, Items: n, DefaultTTL: coll.DefaultTTL, PartitionKey: coll.PartitionKey.Paths})
		}
	}
	if c.json {
		enc := json.NewEncoder(out)
		return enc.Encode(struct {
			Containers     []lsEntry `json:"containers"`
			EmptyDatabases []string  `json:"emptyDatabases"`
		}{entries, emptyDBs})
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DATABASE\tCONTAINER\tITEMS\tPARTITION KEY\tTTL")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", e.Database, e.Container, e.Items, strings.Join(e.PartitionKey, ","), describeTTL(e.DefaultTTL))
	}
	for _, db := range emptyDBs {
		fmt.Fprintf(tw, "%s\t(no containers)\t\t\t\n", db)
	}
	return tw.Flush()
}

// fetch sends a request and hands the server's JSON answer on: printed
// as it is with --json, else decoded into v for the command to print.
// done says the command has nothing left to do: the answer is printed,
// or err says what failed (what names the command).
func (c *adminClient) fetch(out io.Writer, method, path string, body []byte, v any, what string) (done bool, err error) {
	resp, _, err := c.do(context.Background(), method, path, body, nil)
	if err != nil {
		return true, err
	}
	if c.json {
		_, err := fmt.Fprintln(out, string(resp))
		return true, err
	}
	if err := json.Unmarshal(resp, v); err != nil {
		return true, fmt.Errorf("%s: unexpected answer %q", what, resp)
	}
	return false, nil
}

func (c *adminClient) getJSON(ctx context.Context, path string, v any) error {
	body, _, err := c.do(ctx, http.MethodGet, path, nil, nil)
	if err != nil {
		return err
	}
	return json.Unmarshal(body, v)
}

// count counts a container's items with SELECT VALUE COUNT(1), sent to
// its partition key range as the SDKs that fetch a query plan send it,
// and summing the pages' partial counts as they do.
func (c *adminClient) count(ctx context.Context, collPath string) (int64, error) {
	query := []byte(`{"query":"SELECT VALUE COUNT(1) FROM c","parameters":[]}`)
	var total int64
	continuation := ""
	for {
		h := http.Header{}
		h.Set("content-type", "application/query+json")
		h.Set("x-ms-documentdb-isquery", "true")
		h.Set("x-ms-documentdb-query-enablecrosspartition", "true")
		h.Set("x-ms-documentdb-partitionkeyrangeid", "0")
		if continuation != "" {
			h.Set("x-ms-continuation", continuation)
		}
		body, header, err := c.do(ctx, http.MethodPost, collPath+"/docs", query, h)
		if err != nil {
			return 0, err
		}
		var page struct {
			Documents []int64 `json:"Documents"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			return 0, fmt.Errorf("unexpected count page %q", body)
		}
		for _, n := range page.Documents {
			total += n
		}
		if continuation = header.Get("x-ms-continuation"); continuation == "" {
			return total, nil
		}
	}
}
