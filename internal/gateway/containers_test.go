package gateway

import (
	"net/http"
	"testing"

	"github.com/ebbdb/ebb/internal/engine"
)

// TestQuotaHeaders pins the headers of a container read with
// x-ms-documentdb-populatequotainfo: the service's names, units (KB, and
// MB for documentSize, rounded down) and trailing ";", and no usage
// while it is unknown.
func TestQuotaHeaders(t *testing.T) {
	for _, tc := range []struct {
		name            string
		u               engine.Usage
		usage, progress string
	}{
		{"empty", engine.Usage{Known: true, IndexProgress: 100}, "functions=0;storedProcedures=0;triggers=0;documentSize=0;documentsSize=0;documentsCount=0;collectionSize=0;", "100"},
		{"under a KB", engine.Usage{Items: 3, Bytes: 1023, Known: true, IndexProgress: 100}, "functions=0;storedProcedures=0;triggers=0;documentSize=0;documentsSize=0;documentsCount=3;collectionSize=0;", "100"},
		{"MBs", engine.Usage{Items: 5000, Bytes: 3<<20 + 5000, Known: true, IndexProgress: 42}, "functions=0;storedProcedures=0;triggers=0;documentSize=3;documentsSize=3076;documentsCount=5000;collectionSize=3076;", "42"},
		{"unknown", engine.Usage{Items: 7, Bytes: 9000, IndexProgress: 0}, "", "0"},
	} {
		h := http.Header{}
		setQuotaHeaders(h, tc.u)
		if got := h.Get("x-ms-resource-quota"); got != containerQuota {
			t.Errorf("%s: quota %q", tc.name, got)
		}
		if got := h.Get("x-ms-resource-usage"); got != tc.usage {
			t.Errorf("%s: usage %q, want %q", tc.name, got, tc.usage)
		}
		if got := h.Get("x-ms-documentdb-collection-index-transformation-progress"); got != tc.progress {
			t.Errorf("%s: progress %q, want %q", tc.name, got, tc.progress)
		}
	}
}
