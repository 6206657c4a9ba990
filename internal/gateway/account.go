package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
)

// queryEngineConfiguration is what the service advertises; the Go and JS
// SDKs ignore it, .NET and Python read it. Its maxSqlQueryInputLength,
// maxJoinsPerSqlQuery and maxInExpressionItemsCount are the limits Ebb
// enforces (internal/query/limits.go; TestQueryEngineConfiguration).
const queryEngineConfiguration = `{"allowNewKeywordsAsIdentifiers":true,"maxSqlQueryInputLength":524288,"maxJoinsPerSqlQuery":10,"maxLogicalAndPerSqlQuery":500,"maxLogicalOrPerSqlQuery":500,"maxUdfRefPerSqlQuery":10,"maxInExpressionItemsCount":16000,"queryEngineConfigurationVersion":1,"spatialMaxGeometryPointCount":256,"sqlAllowNonFiniteNumbers":false,"sqlDisableOptimizationFlags":0,"enableSpatialIndexing":true,"maxInMemorySortDocumentCount":500,"maxQueryRequestTimeoutFraction":0.9,"sqlAllowAggregateFunctions":true,"sqlAllowGroupByClause":true,"sqlAllowLike":true,"sqlAllowSubQuery":true,"sqlAllowScalarSubQuery":true,"sqlAllowTop":true}`

// account serves GET /, the database account document both SDKs read
// first to learn where to send requests.
func (g *Gateway) account(w http.ResponseWriter, r *http.Request) error {
	body, err := AccountDocument(g.opts.AccountID, g.advertised(r))
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("x-ms-max-media-storage-usage-mb", "10240")
	h.Set("x-ms-media-storage-usage-mb", "0")
	h.Set("x-ms-databaseaccount-consumed-mb", "0")
	h.Set("x-ms-databaseaccount-reserved-mb", "0")
	h.Set("x-ms-databaseaccount-provisioned-mb", "0")
	return writeResource(w, http.StatusOK, resourceOf(body, 1))
}

// AccountDocument is the database account document for account id,
// sending clients to endpoint. (The benchmark's ceiling stub serves the
// same document.)
func AccountDocument(id, endpoint string) ([]byte, error) {
	loc := []map[string]string{{"name": "South Central US", "databaseAccountEndpoint": endpoint}}
	doc := map[string]any{
		"_self":                        "",
		"id":                           id,
		"_rid":                         id + ".documents.azure.com",
		"media":                        "//media/",
		"addresses":                    "//addresses/",
		"_dbs":                         "//dbs/",
		"writableLocations":            loc,
		"readableLocations":            loc,
		"enableMultipleWriteLocations": false,
		"userReplicationPolicy":        map[string]any{"asyncReplication": false, "minReplicaSetSize": 1, "maxReplicasetSize": 4},
		"userConsistencyPolicy":        map[string]any{"defaultConsistencyLevel": accountConsistency},
		"systemReplicationPolicy":      map[string]any{"minReplicaSetSize": 1, "maxReplicasetSize": 4},
		"readPolicy":                   map[string]any{"primaryReadCoefficient": 1, "secondaryReadCoefficient": 1},
		"queryEngineConfiguration":     queryEngineConfiguration,
	}
	return json.Marshal(doc)
}

// advertised is the endpoint clients are told to use: the configured one,
// or the scheme and host this request came in on, so a client that
// connected to localhost stays on localhost.
func (g *Gateway) advertised(r *http.Request) string {
	if g.opts.Advertise != "" {
		a := g.opts.Advertise
		if !strings.HasSuffix(a, "/") {
			a += "/"
		}
		return a
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/"
}
