package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ebbdb/ebb/internal/progress"
)

// Items go to the server in requests of at most chunkItems items and
// about chunkBytes bytes, each written by the engine in one transaction.
const (
	chunkItems = 1000
	chunkBytes = 4 << 20
)

// importTarget is one container to import into, with where its items come
// from.
type importTarget struct {
	db, coll string
	// def, if set, creates the container when it does not exist.
	def *definition
	// items opens the container's items.
	items func() (itemSource, error)
	// size is the bytes its items take in the source, when known.
	size int64
	// scripts are the container's server-side scripts to create, by
	// their path segment (sprocs, triggers, udfs).
	scripts map[string][]json.RawMessage
}

func (t importTarget) name() string { return t.db + "/" + t.coll }

// itemSource yields one JSON document at a time; Next returns io.EOF at
// the end. A document's line, for messages, is Line.
type itemSource interface {
	Next() ([]byte, error)
	Line() int
	Close() error
}

// runImport is `ebb import`.
func runImport(args []string, out io.Writer) error {
	fs := adminFlagSet("import", `ebb import [flags] DIR                          an ebb export directory: definitions and items
       ebb import [flags] --to DB/CONTAINER FILE      items as NDJSON, or a JSON array
       ebb import [flags] --cosmium STATE.json        a cosmium state file

Writes through a running server's engine in transactions of up to 1,000
items, keeping each item's _ts and ttl (items already expired are
skipped). Containers in a directory or cosmium file are created when
missing, with a cosmium file's stored procedures, triggers and functions. An interrupted import resumes where it stopped when run again
(--restart starts over).`)
	to := fs.String("to", "", "DATABASE/CONTAINER to import a file's items into (it must exist)")
	mode := fs.String("mode", "upsert", "upsert (replace items that exist) or create (keep them)")
	cosmium := fs.Bool("cosmium", false, "the source is a cosmium state file (its databases, containers and documents)")
	restart := fs.Bool("restart", false, "ignore the progress an interrupted import saved, and start over")
	client := adminFlags(fs)
	rest, err := parseArgs(fs, args, 1, 1, "one source")
	if err != nil {
		return err
	}
	if *mode != "upsert" && *mode != "create" {
		return fmt.Errorf("import: --mode must be upsert or create; got %q", *mode)
	}
	src := rest[0]
	info, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	var targets []importTarget
	switch {
	case *cosmium:
		targets, err = cosmiumTargets(src)
	case info.IsDir():
		targets, err = directoryTargets(src)
	default:
		db, coll, err := splitContainer(*to)
		if err != nil {
			return fmt.Errorf("import: a file's items need --to DATABASE/CONTAINER: %w", err)
		}
		targets = []importTarget{{db: db, coll: coll, size: info.Size(), items: func() (itemSource, error) { return openItems(src) }}}
	}
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	c, err := client()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	state, err := openImportState(src, info, *restart)
	if err != nil {
		return err
	}
	var total importCounts
	for _, t := range targets {
		n, err := c.importTarget(ctx, t, *mode, state)
		total.add(n)
		if err != nil {
			return err
		}
	}
	state.finish()
	_, err = fmt.Fprintf(out, "imported %d items into %d container(s); %d already there kept, %d expired skipped\n", total.written, len(targets), total.existing, total.expired)
	return err
}

type importCounts struct{ written, existing, expired int }

func (a *importCounts) add(b importCounts) {
	a.written += b.written
	a.existing += b.existing
	a.expired += b.expired
}

// importTarget creates t's database and container if t has a definition
// and they are missing, then sends its items in chunks, skipping those a
// previous run saved as done.
func (c *adminClient) importTarget(ctx context.Context, t importTarget, mode string, state *importState) (importCounts, error) {
	var n importCounts
	if t.def != nil {
		if err := c.ensureContainer(ctx, t); err != nil {
			return n, err
		}
	}
	if err := c.createScripts(ctx, t); err != nil {
		return n, err
	}
	items, err := t.items()
	if err != nil {
		return n, err
	}
	defer items.Close()
	meter := progress.New(os.Stderr, "import "+t.name())
	meter.SetTotals(0, t.size)
	mark := state.done(t.name())
	sum := sha256.New()
	for skipped := 0; skipped < mark.Items; skipped++ {
		doc, err := items.Next()
		if err != nil {
			return n, fmt.Errorf("import %s: the source is shorter than the %d items a previous run imported; use --restart to start over", t.name(), mark.Items)
		}
		sum.Write(doc)
		sum.Write([]byte{'\n'})
		meter.Add(0, int64(len(doc)+1))
	}
	if mark.Items > 0 {
		if hex.EncodeToString(sum.Sum(nil)) != mark.SHA {
			return n, fmt.Errorf("import %s: the source's first %d items are not those a previous run imported; use --restart to start over", t.name(), mark.Items)
		}
		fmt.Fprintf(os.Stderr, "import %s: resuming after the %d items imported before\n", t.name(), mark.Items)
	}
	done := mark.Items
	path := "/_ebb/containers/" + url.PathEscape(t.db) + "/" + url.PathEscape(t.coll) + "/import?mode=" + mode
	// Two requests are in flight, so that the server checks one while it
	// commits the other; their results are taken in order, so the saved
	// progress is always a prefix of the source. When a request fails, the
	// one after it may have been written: a resumed import writes it again
	// (an upsert changes nothing; create-only counts its items as there).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var queue []*chunkSend
	finish := func(cs *chunkSend) error {
		<-cs.done
		if cs.err != nil {
			return chunkError(t, cs.lines, cs.err)
		}
		n.add(cs.res)
		done += len(cs.lines)
		sum.Write(cs.body)
		state.save(t.name(), progressMark{Items: done, SHA: hex.EncodeToString(sum.Sum(nil))})
		meter.Add(int64(len(cs.lines)), int64(len(cs.body)))
		return nil
	}
	fail := func(err error) (importCounts, error) {
		cancel()
		for _, cs := range queue {
			<-cs.done
		}
		return n, err
	}
	var chunk bytes.Buffer
	var lines []int
	for {
		doc, err := items.Next()
		if err != nil && !errors.Is(err, io.EOF) {
			return fail(fmt.Errorf("import %s: %w", t.name(), err))
		}
		if doc != nil {
			chunk.Write(doc)
			chunk.WriteByte('\n')
			lines = append(lines, items.Line())
		}
		if len(lines) > 0 && (len(lines) == chunkItems || chunk.Len() >= chunkBytes || err != nil) {
			cs := &chunkSend{body: bytes.Clone(chunk.Bytes()), lines: slices.Clone(lines), done: make(chan struct{})}
			go func() {
				defer close(cs.done)
				cs.res, cs.err = c.sendChunk(ctx, path, cs.body)
			}()
			queue = append(queue, cs)
			chunk.Reset()
			lines = lines[:0]
			if len(queue) == 2 {
				if ferr := finish(queue[0]); ferr != nil {
					return fail(ferr)
				}
				queue = queue[1:]
			}
		}
		if err != nil { // io.EOF
			for len(queue) > 0 {
				if ferr := finish(queue[0]); ferr != nil {
					return fail(ferr)
				}
				queue = queue[1:]
			}
			note := ""
			if n.existing > 0 || n.expired > 0 {
				note = fmt.Sprintf("%d already there kept, %d expired skipped", n.existing, n.expired)
			}
			meter.Done(note)
			return n, nil
		}
	}
}

// chunkSend is one request of an import in flight.
type chunkSend struct {
	body  []byte
	lines []int
	done  chan struct{} // closed when res and err are set
	res   importCounts
	err   error
}

// sendChunk posts one chunk, waiting as the server asks when it answers
// 429 (its container's throughput is used up).
func (c *adminClient) sendChunk(ctx context.Context, path string, chunk []byte) (importCounts, error) {
	h := http.Header{}
	h.Set("content-type", "application/x-ndjson")
	for attempt := 0; ; attempt++ {
		body, _, err := c.do(ctx, http.MethodPost, path, chunk, h)
		var ae *apiError
		if errors.As(err, &ae) && ae.status == http.StatusTooManyRequests && attempt < 100 {
			wait, cancel := c.clock.After(max(ae.retryAfter, 10*time.Millisecond))
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				cancel()
				return importCounts{}, ctx.Err()
			}
		}
		if err != nil {
			return importCounts{}, err
		}
		var res struct {
			Written, Existing, Expired int
		}
		if err := json.Unmarshal(body, &res); err != nil {
			return importCounts{}, fmt.Errorf("unexpected answer %q", body)
		}
		return importCounts{res.Written, res.Existing, res.Expired}, nil
	}
}

var itemIndex = regexp.MustCompile(`^Item (\d+): `)

// chunkError names the source line of the item the server refused.
func chunkError(t importTarget, lines []int, err error) error {
	var ae *apiError
	if errors.As(err, &ae) {
		if m := itemIndex.FindStringSubmatch(ae.message); m != nil {
			if i, _ := strconv.Atoi(m[1]); i < len(lines) {
				return fmt.Errorf("import %s: the item at line %d: %s (status %d). Neither it nor the rest of its request of up to %d items was written; fix it and run the same command again to resume there",
					t.name(), lines[i], strings.TrimPrefix(ae.message, m[0]), ae.status, chunkItems)
			}
		}
	}
	return fmt.Errorf("import %s: %w", t.name(), err)
}

// createScripts creates t's scripts; one that exists is kept.
func (c *adminClient) createScripts(ctx context.Context, t importTarget) error {
	for _, family := range sortedKeys(t.scripts) {
		for _, body := range t.scripts[family] {
			path := "/dbs/" + url.PathEscape(t.db) + "/colls/" + url.PathEscape(t.coll) + "/" + family
			if _, _, err := c.do(ctx, http.MethodPost, path, body, nil); err != nil && !isConflict(err) {
				return fmt.Errorf("import: create %s of %s: %w", family, t.name(), err)
			}
		}
	}
	return nil
}

// ensureContainer creates t's database and container unless they exist.
func (c *adminClient) ensureContainer(ctx context.Context, t importTarget) error {
	dbBody, _ := json.Marshal(map[string]string{"id": t.db})
	if _, _, err := c.do(ctx, http.MethodPost, "/dbs", dbBody, nil); err != nil && !isConflict(err) {
		return fmt.Errorf("import: create database %s: %w", t.db, err)
	}
	h := http.Header{}
	if o := t.def.Offer; o != nil {
		switch {
		case o.AutoscaleMaxRUPer > 0:
			h.Set("x-ms-cosmos-offer-autopilot-settings", fmt.Sprintf(`{"maxThroughput":%d}`, o.AutoscaleMaxRUPer))
		case o.Throughput > 0:
			h.Set("x-ms-offer-throughput", strconv.Itoa(o.Throughput))
		}
	}
	_, _, err := c.do(ctx, http.MethodPost, "/dbs/"+url.PathEscape(t.db)+"/colls", t.def.Container, h)
	if err != nil && !isConflict(err) {
		return fmt.Errorf("import: create container %s: %w", t.name(), err)
	}
	return nil
}

func isConflict(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.status == http.StatusConflict
}

// directoryTargets reads an export directory (see export.go).
func directoryTargets(dir string) ([]importTarget, error) {
	dbDirs, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var targets []importTarget
	for _, d := range dbDirs {
		if !d.IsDir() {
			continue
		}
		db, err := fileToName(d.Name())
		if err != nil {
			return nil, fmt.Errorf("%s is not a database's directory: %w", d.Name(), err)
		}
		defs, err := filepath.Glob(filepath.Join(dir, d.Name(), "*"+definitionSuffix))
		if err != nil {
			return nil, err
		}
		slices.Sort(defs)
		for _, defPath := range defs {
			raw, err := os.ReadFile(defPath)
			if err != nil {
				return nil, err
			}
			var def definition
			var props struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(raw, &def); err != nil || json.Unmarshal(def.Container, &props) != nil || props.ID == "" {
				return nil, fmt.Errorf("%s is not a container definition written by ebb export", defPath)
			}
			itemsPath := strings.TrimSuffix(defPath, definitionSuffix) + itemsSuffix
			var size int64
			if st, err := os.Stat(itemsPath); err == nil {
				size = st.Size()
			}
			targets = append(targets, importTarget{
				db: db, coll: props.ID, def: &def, size: size,
				items: func() (itemSource, error) {
					if _, err := os.Stat(itemsPath); errors.Is(err, os.ErrNotExist) {
						return &sliceSource{}, nil
					}
					return openItems(itemsPath)
				},
			})
		}
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("%s holds no container written by ebb export", dir)
	}
	return targets, nil
}

// openItems opens a file of items: a JSON array, or one document per line.
func openItems(path string) (itemSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, 1<<20)
	for {
		b, err := br.Peek(1)
		if err != nil {
			f.Close()
			if errors.Is(err, io.EOF) {
				return &sliceSource{}, nil
			}
			return nil, err
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			br.ReadByte()
			continue
		case '[':
			dec := json.NewDecoder(br)
			dec.Token() // the '['
			return &arraySource{f: f, dec: dec}, nil
		}
		return &lineSource{f: f, r: br}, nil
	}
}

// lineSource reads NDJSON: one document per line, blank lines skipped.
type lineSource struct {
	f    *os.File
	r    *bufio.Reader
	line int
}

func (s *lineSource) Next() ([]byte, error) {
	for {
		raw, err := s.r.ReadBytes('\n')
		s.line++
		doc := bytes.TrimSpace(raw)
		if len(doc) > 0 {
			return doc, nil // the server checks it, naming this line if it must
		}
		if err != nil {
			return nil, err
		}
	}
}

func (s *lineSource) Line() int    { return s.line }
func (s *lineSource) Close() error { return s.f.Close() }

// arraySource reads the elements of a JSON array one at a time.
type arraySource struct {
	f   *os.File
	dec *json.Decoder
	n   int
}

func (s *arraySource) Next() ([]byte, error) {
	if !s.dec.More() {
		return nil, io.EOF
	}
	var doc json.RawMessage
	if err := s.dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("element %d of the array: %w", s.n+1, err)
	}
	s.n++
	var compact bytes.Buffer
	if err := json.Compact(&compact, doc); err != nil {
		return nil, err
	}
	return compact.Bytes(), nil
}

func (s *arraySource) Line() int    { return s.n }
func (s *arraySource) Close() error { return s.f.Close() }

// sliceSource yields documents held in memory (a cosmium state file's).
type sliceSource struct {
	docs [][]byte
	n    int
}

func (s *sliceSource) Next() ([]byte, error) {
	if s.n == len(s.docs) {
		return nil, io.EOF
	}
	s.n++
	return s.docs[s.n-1], nil
}

func (s *sliceSource) Line() int    { return s.n }
func (s *sliceSource) Close() error { return nil }

// cosmiumTargets reads a cosmium state file: its containers (created with
// their partition key and indexing policy), their documents and their
// server-side scripts.
func cosmiumTargets(path string) ([]importTarget, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var state struct {
		Collections map[string]map[string]struct {
			ID             string          `json:"id"`
			PartitionKey   json.RawMessage `json:"partitionKey"`
			IndexingPolicy json.RawMessage `json:"indexingPolicy"`
		} `json:"collections"`
		Documents map[string]map[string]map[string]json.RawMessage `json:"documents"`
		Triggers  map[string]map[string]map[string]json.RawMessage `json:"triggers"`
		Sprocs    map[string]map[string]map[string]json.RawMessage `json:"sprocs"`
		UDFs      map[string]map[string]map[string]json.RawMessage `json:"udfs"`
	}
	if err := json.Unmarshal(raw, &state); err != nil {
		return nil, fmt.Errorf("%s is not a cosmium state file: %w", path, err)
	}
	var targets []importTarget
	for _, db := range sortedKeys(state.Collections) {
		for _, coll := range sortedKeys(state.Collections[db]) {
			col := state.Collections[db][coll]
			props := map[string]any{"id": coll, "partitionKey": cosmiumPartitionKey(col.PartitionKey)}
			if p := cosmiumIndexingPolicy(col.IndexingPolicy); p != nil {
				props["indexingPolicy"] = p
			}
			body, _ := json.Marshal(props)
			docs := state.Documents[db][coll]
			src := &sliceSource{}
			var size int64
			for _, id := range sortedKeys(docs) {
				var compact bytes.Buffer
				if err := json.Compact(&compact, docs[id]); err != nil {
					return nil, err
				}
				src.docs = append(src.docs, compact.Bytes())
				size += int64(compact.Len() + 1)
			}
			targets = append(targets, importTarget{db: db, coll: coll, def: &definition{Container: body}, size: size,
				items: func() (itemSource, error) { src.n = 0; return src, nil }})
		}
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("%s holds no collections", path)
	}
	// Scripts keep what the service stores of them: the system
	// properties cosmium kept are the server's to make.
	scriptBody := func(raw json.RawMessage, fields ...string) json.RawMessage {
		var all map[string]json.RawMessage
		json.Unmarshal(raw, &all)
		keep := map[string]json.RawMessage{}
		for _, f := range append([]string{"id", "body"}, fields...) {
			if v, ok := all[f]; ok {
				keep[f] = v
			}
		}
		out, _ := json.Marshal(keep)
		return out
	}
	for i := range targets {
		t := &targets[i]
		t.scripts = map[string][]json.RawMessage{}
		for family, m := range map[string]map[string]map[string]map[string]json.RawMessage{"sprocs": state.Sprocs, "triggers": state.Triggers, "udfs": state.UDFs} {
			for _, id := range sortedKeys(m[t.db][t.coll]) {
				t.scripts[family] = append(t.scripts[family], scriptBody(m[t.db][t.coll][id], "triggerType", "triggerOperation"))
			}
		}
	}
	return targets, nil
}

// cosmiumPartitionKey is cosmium's partition key definition as the
// service spells it ("Version" is "version"; hash when no kind).
func cosmiumPartitionKey(raw json.RawMessage) map[string]any {
	var pk struct {
		Paths   []string `json:"paths"`
		Kind    string   `json:"kind"`
		Version int      `json:"Version"`
	}
	json.Unmarshal(raw, &pk)
	if len(pk.Paths) == 0 {
		pk.Paths = []string{"/_partitionKey"}
	}
	if pk.Kind == "" {
		pk.Kind = "Hash"
		if len(pk.Paths) > 1 {
			pk.Kind = "MultiHash"
		}
	}
	out := map[string]any{"paths": pk.Paths, "kind": pk.Kind}
	if pk.Version > 0 {
		out["version"] = pk.Version
	}
	return out
}

// cosmiumIndexingPolicy keeps what a cosmium policy says that the service
// still accepts: the mode and the included and excluded paths, without
// the legacy per-path index kinds.
func cosmiumIndexingPolicy(raw json.RawMessage) map[string]any {
	var p struct {
		Mode     string `json:"indexingMode"`
		Included []struct {
			Path string `json:"path"`
		} `json:"includedPaths"`
		Excluded []struct {
			Path string `json:"path"`
		} `json:"excludedPaths"`
	}
	if json.Unmarshal(raw, &p) != nil || (p.Mode == "" && len(p.Included) == 0 && len(p.Excluded) == 0) {
		return nil
	}
	paths := func(ps []struct {
		Path string `json:"path"`
	}) []map[string]string {
		out := []map[string]string{}
		for _, x := range ps {
			if x.Path != "" {
				out = append(out, map[string]string{"path": x.Path})
			}
		}
		return out
	}
	out := map[string]any{"includedPaths": paths(p.Included), "excludedPaths": paths(p.Excluded)}
	if p.Mode != "" {
		out["indexingMode"] = strings.ToLower(p.Mode)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// importState is an import's saved progress: per container, how many of
// its source's items are written. It lives beside the source (SOURCE.ebb-
// import, or DIR/.ebb-import) and is removed when the import completes.
type importState struct {
	path string
	Done map[string]progressMark `json:"done"`
}

// progressMark is how far a container's import got: the items written,
// and a SHA-256 of them, so that a resumed import can tell that the source
// still begins with them (a fixed line after them is fine; a different
// file is not).
type progressMark struct {
	Items int    `json:"items"`
	SHA   string `json:"sha256"`
}

func openImportState(src string, info os.FileInfo, restart bool) (*importState, error) {
	path := src + ".ebb-import"
	if info.IsDir() {
		path = filepath.Join(src, ".ebb-import")
	}
	s := &importState{path: path, Done: map[string]progressMark{}}
	raw, err := os.ReadFile(path)
	switch {
	case restart || errors.Is(err, os.ErrNotExist):
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("import: read saved progress: %w", err)
	}
	var saved importState
	if json.Unmarshal(raw, &saved) != nil {
		return nil, fmt.Errorf("import: %s is not progress saved by ebb import; remove it or use --restart", path)
	}
	if saved.Done != nil {
		s.Done = saved.Done
	}
	return s, nil
}

func (s *importState) done(container string) progressMark { return s.Done[container] }

// save records progress; it is written whole and renamed into place, so a
// crash leaves the old progress or the new.
func (s *importState) save(container string, m progressMark) {
	s.Done[container] = m
	raw, _ := json.Marshal(s)
	tmp := s.path + ".tmp"
	if os.WriteFile(tmp, raw, 0o644) == nil {
		os.Rename(tmp, s.path)
	}
}

func (s *importState) finish() { os.Remove(s.path) }
