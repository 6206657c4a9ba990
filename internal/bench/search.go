package bench

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/engine"
	"github.com/ebbdb/ebb/internal/server"
)

// The search benchmark measures vector and full-text search over the
// wire, as an application issues it: items of one 768-dimension vector
// (drawn around 64 random centres, as embeddings cluster by topic) and
// eight words of text, written through the Go SDK in transactional
// batches of 100 across 16 partitions; then, once the diskANN graph is
// built, top-10 searches across partitions: exact (bruteForce), from the
// graph (with its recall@10 against exact), and ranked by FullTextScore.
// Queries go over REST to the one partition key range, as the JS SDK
// sends them (the Go SDK runs no cross-partition ORDER BY).

// SearchOptions configure RunSearch.
type SearchOptions struct {
	Items, Dims, Queries int
	Memory               bool
	// Store, if set, is the postgres:// database (an empty one) Ebb runs
	// on instead of Pebble.
	Store    string
	TempDir  string
	Progress io.Writer
}

// SearchReport is what RunSearch measured.
type SearchReport struct {
	Machine              Machine
	Storage              string
	Items, Dims, Queries int
	IngestPerSecond      float64
	GraphBuild           time.Duration
	Exact, ANN, FullText Stats
	Recall               float64
}

// RunSearch runs the search benchmark on a fresh in-process Ebb.
func RunSearch(ctx context.Context, opts SearchOptions) (SearchReport, error) {
	rep := SearchReport{Machine: ThisMachine(), Storage: storageName(opts.Memory), Items: opts.Items, Dims: opts.Dims, Queries: opts.Queries}
	cfg := server.Config{Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler), Memory: opts.Memory, Store: opts.Store}
	if opts.Store != "" {
		rep.Storage = "PostgreSQL"
	} else if !opts.Memory {
		dir, err := os.MkdirTemp(opts.TempDir, "ebb-searchbench-*")
		if err != nil {
			return rep, err
		}
		defer os.RemoveAll(dir)
		cfg.DataDir = dir
	}
	srv, err := server.Start(ctx, cfg)
	if err != nil {
		return rep, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	progress := func(format string, args ...any) {
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, format+"\n", args...)
		}
	}
	eng := srv.Engine
	if _, err := eng.CreateDatabase(ctx, []byte(`{"id":"search"}`), engine.ThroughputHeaders{}); err != nil {
		return rep, err
	}
	policy := fmt.Sprintf(`{"id":"docs","partitionKey":{"paths":["/pk"]},`+
		`"vectorEmbeddingPolicy":{"vectorEmbeddings":[{"path":"/v","dataType":"float32","distanceFunction":"cosine","dimensions":%d}]},`+
		`"fullTextPolicy":{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/t"}]},`+
		`"indexingPolicy":{"excludedPaths":[{"path":"/v/*"}],"vectorIndexes":[{"path":"/v","type":"diskANN"}],"fullTextIndexes":[{"path":"/t"}]}}`, opts.Dims)
	// Throughput enough that no write waits for it.
	if _, err := eng.CreateContainer(ctx, "search", []byte(policy), engine.ThroughputHeaders{Offer: "1000000"}); err != nil {
		return rep, err
	}
	client, closeIdle, err := NewClient(srv.URL)
	if err != nil {
		return rep, err
	}
	defer closeIdle()
	container, err := client.NewContainer("search", "docs")
	if err != nil {
		return rep, err
	}

	rng := rand.New(rand.NewPCG(1, 2))
	centres := make([][]float32, 64)
	for c := range centres {
		centres[c] = make([]float32, opts.Dims)
		for i := range centres[c] {
			centres[c][i] = float32(rng.Float64()*2 - 1)
		}
	}
	draw := func() []float32 {
		c, v := centres[rng.IntN(len(centres))], make([]float32, opts.Dims)
		for i := range v {
			v[i] = c[i] + float32(rng.NormFloat64()*0.3)
		}
		return v
	}
	words := strings.Fields("search engine vector index query ranking score document text token stem word corpus relevance retrieval")
	sys := clock.NewSystem()
	progress("search: writing %d items of %d dimensions", opts.Items, opts.Dims)
	start := sys.Elapsed()
	for first := 0; first < opts.Items; first += 100 {
		pk := fmt.Sprintf("p%d", (first/100)%16)
		batch := container.NewTransactionalBatch(azcosmos.NewPartitionKeyString(pk))
		for i := first; i < min(first+100, opts.Items); i++ {
			t := make([]string, 8)
			for j := range t {
				t[j] = words[rng.IntN(len(words))]
			}
			doc, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("d%07d", i), "pk": pk, "v": draw(), "t": strings.Join(t, " ")})
			batch.CreateItem(doc, nil)
		}
		res, err := container.ExecuteTransactionalBatch(ctx, batch, nil)
		if err != nil {
			return rep, err
		}
		if !res.Success {
			return rep, fmt.Errorf("search: a batch of items failed")
		}
	}
	rep.IngestPerSecond = float64(opts.Items) / (sys.Elapsed() - start).Seconds()

	progress("search: waiting for the diskANN graph")
	start = sys.Elapsed()
	for {
		built, err := eng.VectorIndexesBuilt(ctx, "search", "docs")
		if err != nil {
			return rep, err
		}
		if built {
			break
		}
		tick, _ := sys.After(50 * time.Millisecond)
		select {
		case <-ctx.Done():
			return rep, ctx.Err()
		case <-tick:
		}
	}
	rep.GraphBuild = sys.Elapsed() - start

	q := newRESTQuerier(srv.URL, "search", "docs", sys)
	defer q.close()
	queries := make([]string, opts.Queries)
	for i := range queries {
		v, _ := json.Marshal(draw())
		queries[i] = string(v)
	}
	run := func(what string, text func(i int) string) (Stats, [][]string, error) {
		progress("search: %s", what)
		rec, ids := &Recorder{}, make([][]string, len(queries))
		// The first search reads what the others rank by into memory.
		if _, err := q.ids(ctx, text(0)); err != nil {
			return Stats{}, nil, err
		}
		began := sys.Elapsed()
		for i := range queries {
			t0 := sys.Elapsed()
			got, err := q.ids(ctx, text(i))
			if err != nil {
				return Stats{}, nil, err
			}
			rec.Add(sys.Elapsed() - t0)
			ids[i] = got
		}
		return rec.Stats(sys.Elapsed() - began), ids, nil
	}
	var exact, approx [][]string
	if rep.Exact, exact, err = run("exact top 10", func(i int) string {
		return "SELECT TOP 10 c.id FROM c ORDER BY VectorDistance(c.v, " + queries[i] + ", true)"
	}); err != nil {
		return rep, err
	}
	if rep.ANN, approx, err = run("diskANN top 10", func(i int) string {
		return "SELECT TOP 10 c.id FROM c ORDER BY VectorDistance(c.v, " + queries[i] + ")"
	}); err != nil {
		return rep, err
	}
	found, want := 0, 0
	for i := range exact {
		for _, id := range approx[i] {
			if slices.Contains(exact[i], id) {
				found++
			}
		}
		want += len(exact[i])
	}
	rep.Recall = float64(found) / float64(max(want, 1))
	if rep.FullText, _, err = run("full-text top 10", func(i int) string {
		return fmt.Sprintf("SELECT TOP 10 c.id FROM c ORDER BY RANK FullTextScore(c.t, '%s', '%s')", words[i%len(words)], words[(i*7+3)%len(words)])
	}); err != nil {
		return rep, err
	}
	return rep, nil
}

// WriteMarkdown writes the report as Markdown.
func (r SearchReport) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured on %s, Ebb on %s: %s items of %d dimensions and eight words each, written through the Go SDK at %s items/s (transactional batches of 100); the diskANN graph built in %v; %d searches of each kind across partitions, one at a time, over HTTP/2:\n\n",
		r.Machine, r.Storage, thousands(float64(r.Items)), r.Dims, thousands(r.IngestPerSecond), r.GraphBuild.Round(10*time.Millisecond), r.Queries)
	b.WriteString("| Search | p50 | p99 | Recall@10 against exact |\n|---|--:|--:|--:|\n")
	fmt.Fprintf(&b, "| top 10 by `VectorDistance`, exact (`bruteForce`) | %s | %s | 1.000 |\n", fmtLatency(r.Exact.P50), fmtLatency(r.Exact.P99))
	fmt.Fprintf(&b, "| top 10 by `VectorDistance` from the diskANN graph | %s | %s | %.3f |\n", fmtLatency(r.ANN.P50), fmtLatency(r.ANN.P99), r.Recall)
	fmt.Fprintf(&b, "| top 10 by `ORDER BY RANK FullTextScore`, two terms | %s | %s | — |\n\n", fmtLatency(r.FullText.P50), fmtLatency(r.FullText.P99))
	_, err := io.WriteString(w, b.String())
	return err
}

// restQuerier sends queries to a container's one partition key range,
// signed with the emulator key, as the JS SDK sends each range's query.
type restQuerier struct {
	url, link string
	client    *http.Client
	verifier  *auth.Verifier
	clock     clock.Clock // dates the signatures
}

func newRESTQuerier(endpoint, db, coll string, c clock.Clock) *restQuerier {
	v, _ := auth.NewVerifier(auth.EmulatorKey)
	return &restQuerier{
		url: strings.TrimSuffix(endpoint, "/") + "/dbs/" + db + "/colls/" + coll + "/docs", link: "dbs/" + db + "/colls/" + coll,
		client:   &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true}},
		verifier: v, clock: c,
	}
}

func (q *restQuerier) close() { q.client.CloseIdleConnections() }

// ids runs a query whose rows are {"id": …} and returns the ids.
func (q *restQuerier) ids(ctx context.Context, text string) ([]string, error) {
	body, _ := json.Marshal(map[string]string{"query": text})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, q.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	date := q.clock.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("Content-Type", "application/query+json")
	req.Header.Set("x-ms-documentdb-isquery", "true")
	req.Header.Set("x-ms-documentdb-query-enablecrosspartition", "true")
	req.Header.Set("x-ms-documentdb-partitionkeyrangeid", "0")
	req.Header.Set("x-ms-max-item-count", "-1")
	req.Header.Set("x-ms-version", "2020-07-15")
	req.Header.Set("x-ms-date", date)
	req.Header.Set("Authorization", q.verifier.Sign("post", "docs", q.link, date))
	res, err := q.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("search: %s: %d %s", text[:min(len(text), 60)], res.StatusCode, raw)
	}
	var page struct {
		Documents []struct{ ID string } `json:"Documents"`
	}
	if err := json.Unmarshal(raw, &page); err != nil {
		return nil, err
	}
	ids := make([]string, len(page.Documents))
	for i, d := range page.Documents {
		ids[i] = d.ID
	}
	return ids, nil
}
