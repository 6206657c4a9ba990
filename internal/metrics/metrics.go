// Package metrics owns Ebb's Prometheus metrics: their names, labels and
// buckets, in one registry per server so tests that run several servers
// in one process keep their figures apart.
package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry holds every metric a server exports.
type Registry struct {
	reg *prometheus.Registry

	// Requests.
	RequestDuration *prometheus.HistogramVec // operation, status
	RequestUnits    *prometheus.CounterVec   // operation
	Throttled       *prometheus.CounterVec   // operation

	// Connections, by listener ("api" or "metrics").
	OpenConnections  *prometheus.GaugeVec
	ConnectionCapHit *prometheus.CounterVec

	// TTL expiry. The container label is "<db>/<container>".
	TTLPurged         *prometheus.CounterVec
	TTLPurgeLag       *prometheus.HistogramVec
	TTLPurgerWakeups  prometheus.Counter
	TTLPurgeThrottled *prometheus.CounterVec
	TTLPurgeUnits     *prometheus.CounterVec
	TTLBacklog        *prometheus.GaugeVec
	TTLOldestUnpurged *prometheus.GaugeVec

	// Delete by partition key.
	PKDeletedItems *prometheus.CounterVec
}

// New returns a registry with every metric registered, plus the Go
// runtime and process collectors.
func New() *Registry {
	r := &Registry{reg: prometheus.NewRegistry()}
	r.RequestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "ebb_request_duration_seconds",
		Help:    "Time to serve a request, by operation and HTTP status.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	}, []string{"operation", "status"})
	r.RequestUnits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ebb_request_units_total",
		Help: "Request units charged, by operation.",
	}, []string{"operation"})
	r.Throttled = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ebb_throttled_requests_total",
		Help: "Requests answered 429 because their offer's throughput was used up.",
	}, []string{"operation"})
	r.OpenConnections = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ebb_open_connections",
		Help: "Client connections a listener holds open.",
	}, []string{"listener"})
	r.ConnectionCapHit = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ebb_connection_cap_reached_total",
		Help: "Times a listener had --max-connections open and left new connections waiting until one closed.",
	}, []string{"listener"})
	r.TTLPurged = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ebb_ttl_purged_total",
		Help: "Expired items physically deleted by the purger.",
	}, []string{"container"})
	r.TTLPurgeLag = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "ebb_ttl_purge_lag_seconds",
		Help:    "Purge time minus expiry time of each purged item.",
		Buckets: []float64{.01, .05, .1, .25, .5, 1, 2, 5, 10, 30, 60, 300, 3600},
	}, []string{"container"})
	r.TTLPurgerWakeups = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ebb_ttl_purger_wakeups_total",
		Help: "Times the purger woke up (a deadline came, or a write or container change re-planned it).",
	})
	r.TTLPurgeThrottled = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ebb_ttl_purge_throttled_seconds_total",
		Help: "Time the purger waited for spare throughput.",
	}, []string{"container"})
	r.TTLPurgeUnits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ebb_ttl_purge_ru_total",
		Help: "Request units the purger spent.",
	}, []string{"container"})
	r.TTLBacklog = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ebb_ttl_backlog_items",
		Help: "Expired items not yet purged, as of the purger's last pass.",
	}, []string{"container"})
	r.TTLOldestUnpurged = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ebb_ttl_oldest_unpurged_age_seconds",
		Help: "How long ago the oldest unpurged item expired, as of the purger's last pass.",
	}, []string{"container"})
	r.PKDeletedItems = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ebb_partition_delete_items_total",
		Help: "Items physically deleted by delete-by-partition-key.",
	}, []string{"container"})
	r.reg.MustRegister(
		r.RequestDuration, r.RequestUnits, r.Throttled,
		r.OpenConnections, r.ConnectionCapHit,
		r.TTLPurged, r.TTLPurgeLag, r.TTLPurgerWakeups, r.TTLPurgeThrottled, r.TTLPurgeUnits,
		r.TTLBacklog, r.TTLOldestUnpurged, r.PKDeletedItems,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return r
}

// SharedStoreCounts are a shared store's counts since it opened, as
// WatchSharedStore exports them.
type SharedStoreCounts struct {
	// Updates are the write transactions asked of the store; Retries,
	// the attempts made again after a conflict.
	Updates, Retries uint64
	// Grouped are the write transactions that ran in a database
	// transaction with others (the PostgreSQL store's groups);
	// Regrouped, those that ran again alone because their group failed.
	Grouped, Regrouped uint64
}

// WatchSharedStore exports a shared store's counts, read from the store
// when scraped. A rising share of retries means writes contend; a
// rising share of regrouped writes, that groups fail (a partition locked
// by another node for long, connections that break).
func (r *Registry) WatchSharedStore(counts func() SharedStoreCounts) {
	counter := func(name, help string, field func(SharedStoreCounts) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return float64(field(counts())) })
	}
	r.reg.MustRegister(
		counter("ebb_storage_updates_total", "Write transactions asked of the shared store.",
			func(c SharedStoreCounts) uint64 { return c.Updates }),
		counter("ebb_storage_update_retries_total", "Write transaction attempts on the shared store made again after a serialization failure or deadlock.",
			func(c SharedStoreCounts) uint64 { return c.Retries }),
		counter("ebb_storage_grouped_updates_total", "Point writes that ran in one database transaction with other partitions' point writes.",
			func(c SharedStoreCounts) uint64 { return c.Grouped }),
		counter("ebb_storage_regrouped_updates_total", "Point writes that ran again alone because the group they ran in failed.",
			func(c SharedStoreCounts) uint64 { return c.Regrouped }),
	)
}

// WatchRowCache exports the embedded store's row cache: look-ups that
// found the value there and ones that read Pebble, and the bytes held,
// read from the store when scraped.
func (r *Registry) WatchRowCache(hits, misses func() uint64, bytes func() int) {
	r.reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "ebb_row_cache_hits_total",
			Help: "Point reads of the embedded store answered from the row cache.",
		}, func() float64 { return float64(hits()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "ebb_row_cache_misses_total",
			Help: "Point reads of the embedded store that read Pebble (the row cache did not hold the value).",
		}, func() float64 { return float64(misses()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ebb_row_cache_bytes",
			Help: "Bytes of keys and values the row cache holds.",
		}, func() float64 { return float64(bytes()) }),
	)
}

// Handler serves the registry in the Prometheus text format.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{})
}

// ForgetContainer drops a deleted container's series.
func (r *Registry) ForgetContainer(label string) {
	for _, v := range []interface{ DeleteLabelValues(...string) bool }{
		r.TTLPurged, r.TTLPurgeLag, r.TTLPurgeThrottled, r.TTLPurgeUnits, r.TTLBacklog, r.TTLOldestUnpurged, r.PKDeletedItems,
	} {
		v.DeleteLabelValues(label)
	}
}
