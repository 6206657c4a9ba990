package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ebbdb/ebb/internal/progress"
)

// An export directory holds, for each database, a directory named after
// it and, in it, for each container:
//
//	CONTAINER.container.json  its definition (partition key, TTL, indexing,
//	                          unique keys, computed properties) and offer
//	CONTAINER.ndjson          its items, one JSON document per line
//
// Names are escaped (nameToFile) so that any id is a valid file name on
// every platform. ebb import reads the same layout.
const (
	definitionSuffix = ".container.json"
	itemsSuffix      = ".ndjson"
)

// definition is a container's file in an export: the container's
// properties as the service returns them, less its system properties,
// plus its offer.
type definition struct {
	Container json.RawMessage `json:"container"`
	Offer     *offerSpec      `json:"offer,omitempty"`
}

// offerSpec is a container's dedicated throughput.
type offerSpec struct {
	Throughput        int `json:"throughput,omitempty"`
	AutoscaleMaxRUPer int `json:"autoscaleMaxThroughput,omitempty"`
}

// runExport is `ebb export [DB[/CONTAINER]]`.
func runExport(args []string, out io.Writer) error {
	fs := adminFlagSet("export", `ebb export [flags] DATABASE/CONTAINER   items as NDJSON to --out FILE, or to standard output
       ebb export [flags] --out DIR DATABASE     the database's containers: definitions and items
       ebb export [flags] --out DIR              every database

Reads through a running server, so items whose time to live has run out
are never exported; each item keeps its _ts and ttl, so that after
ebb import it expires when it would have.`)
	outPath := fs.String("out", "", "the file (one container) or directory (a database, or everything) to write")
	client := adminFlags(fs)
	rest, err := parseArgs(fs, args, 0, 1, "at most one DATABASE or DATABASE/CONTAINER")
	if err != nil {
		return err
	}
	c, err := client()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	target := ""
	if len(rest) == 1 {
		target = rest[0]
	}
	db := target
	if strings.Contains(target, "/") {
		db, coll, err := splitContainer(target)
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		w := out
		if *outPath != "" && *outPath != "-" {
			f, err := os.Create(*outPath)
			if err != nil {
				return fmt.Errorf("export: %w", err)
			}
			defer f.Close()
			w = f
		}
		bw := bufio.NewWriterSize(w, 1<<20)
		if err := c.exportItems(ctx, db, coll, bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	if *outPath == "" {
		return fmt.Errorf("export: a database or everything goes to a directory: give --out DIR")
	}
	if err := checkEmptyDir(*outPath); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	dbs := []string{db}
	if db == "" {
		if dbs, err = c.databaseIDs(ctx); err != nil {
			return err
		}
	}
	offers, err := c.containerOffers(ctx)
	if err != nil {
		return err
	}
	for _, db := range dbs {
		if err := c.exportDatabase(ctx, db, *outPath, offers); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(out, "exported %d database(s) to %s\n", len(dbs), *outPath)
	return err
}

func (c *adminClient) databaseIDs(ctx context.Context) ([]string, error) {
	var dbs struct {
		Databases []struct {
			ID string `json:"id"`
		} `json:"Databases"`
	}
	if err := c.getJSON(ctx, "/dbs", &dbs); err != nil {
		return nil, err
	}
	ids := make([]string, len(dbs.Databases))
	for i, d := range dbs.Databases {
		ids[i] = d.ID
	}
	return ids, nil
}

// containerOffers maps each container's _rid to its dedicated offer.
func (c *adminClient) containerOffers(ctx context.Context) (map[string]*offerSpec, error) {
	var offers struct {
		Offers []struct {
			ResourceRID string `json:"offerResourceId"`
			Content     struct {
				Throughput int `json:"offerThroughput"`
				Autopilot  *struct {
					MaxThroughput int `json:"maxThroughput"`
				} `json:"offerAutopilotSettings"`
			} `json:"content"`
		} `json:"Offers"`
	}
	if err := c.getJSON(ctx, "/offers", &offers); err != nil {
		return nil, err
	}
	m := map[string]*offerSpec{}
	for _, o := range offers.Offers {
		if o.Content.Autopilot != nil && o.Content.Autopilot.MaxThroughput > 0 {
			m[o.ResourceRID] = &offerSpec{AutoscaleMaxRUPer: o.Content.Autopilot.MaxThroughput}
		} else {
			m[o.ResourceRID] = &offerSpec{Throughput: o.Content.Throughput}
		}
	}
	return m, nil
}

// exportDatabase writes db's containers under dir/db.
func (c *adminClient) exportDatabase(ctx context.Context, db, dir string, offers map[string]*offerSpec) error {
	var colls struct {
		Containers []json.RawMessage `json:"DocumentCollections"`
	}
	if err := c.getJSON(ctx, "/dbs/"+url.PathEscape(db)+"/colls", &colls); err != nil {
		return err
	}
	dbDir := filepath.Join(dir, nameToFile(db))
	if err := os.MkdirAll(dbDir, 0o755); err != nil {
		return err
	}
	for _, raw := range colls.Containers {
		var props map[string]json.RawMessage
		if err := json.Unmarshal(raw, &props); err != nil {
			return fmt.Errorf("export %s: unexpected container %q", db, raw)
		}
		var id, rid string
		json.Unmarshal(props["id"], &id)
		json.Unmarshal(props["_rid"], &rid)
		for k := range props {
			if strings.HasPrefix(k, "_") {
				delete(props, k)
			}
		}
		body, _ := json.MarshalIndent(props, "  ", "  ")
		def, _ := json.MarshalIndent(definition{Container: body, Offer: offers[rid]}, "", "  ")
		base := filepath.Join(dbDir, nameToFile(id))
		if err := os.WriteFile(base+definitionSuffix, append(def, '\n'), 0o644); err != nil {
			return err
		}
		f, err := os.Create(base + itemsSuffix)
		if err != nil {
			return err
		}
		bw := bufio.NewWriterSize(f, 1<<20)
		err = c.exportItems(ctx, db, id, bw)
		if err == nil {
			err = bw.Flush()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// exportItems writes a container's visible items to w, one per line, by
// its read feed.
func (c *adminClient) exportItems(ctx context.Context, db, coll string, w io.Writer) error {
	collPath := "/dbs/" + url.PathEscape(db) + "/colls/" + url.PathEscape(coll)
	total, err := c.count(ctx, collPath)
	if err != nil {
		return fmt.Errorf("export %s/%s: %w", db, coll, err)
	}
	meter := progress.New(os.Stderr, "export "+db+"/"+coll)
	meter.SetTotals(total, 0)
	continuation := ""
	for {
		h := http.Header{}
		h.Set("x-ms-max-item-count", "1000")
		if continuation != "" {
			h.Set("x-ms-continuation", continuation)
		}
		body, header, err := c.do(ctx, http.MethodGet, collPath+"/docs", nil, h)
		if err != nil {
			return fmt.Errorf("export %s/%s: %w", db, coll, err)
		}
		var page struct {
			Documents []json.RawMessage `json:"Documents"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			return fmt.Errorf("export %s/%s: unexpected page: %w", db, coll, err)
		}
		var line bytes.Buffer
		for _, doc := range page.Documents {
			line.Reset()
			if err := json.Compact(&line, doc); err != nil {
				return err
			}
			line.WriteByte('\n')
			if _, err := w.Write(line.Bytes()); err != nil {
				return err
			}
			meter.Add(1, int64(line.Len()))
		}
		if continuation = header.Get("x-ms-continuation"); continuation == "" {
			meter.Done("")
			return nil
		}
	}
}

// nameToFile escapes a database or container id for a file name: letters,
// digits, '-', '_' and '.' stay (but not a leading '.'), every other byte
// becomes %XX. fileToName undoes it.
func nameToFile(id string) string {
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		ch := id[i]
		switch {
		case 'a' <= ch && ch <= 'z', 'A' <= ch && ch <= 'Z', '0' <= ch && ch <= '9', ch == '-', ch == '_', ch == '.' && i > 0:
			b.WriteByte(ch)
		default:
			fmt.Fprintf(&b, "%%%02X", ch)
		}
	}
	return b.String()
}

func fileToName(file string) (string, error) {
	return url.PathUnescape(file)
}
