package pebble

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Pebble keeps its memtables and block cache in memory it allocates and
// frees itself. Built with cgo, that memory comes from C and the Go
// garbage collector never sees it. Built without cgo, as Ebb's release
// binaries are (scripts/release), it is ordinary Go heap, and GOGC's rule
// (collect again once the heap has grown by GOGC% of what survived the
// last collection) counts it as if it made garbage: a 32 MB memtable lets
// 32 MB of request garbage pile up between collections, and the process
// holds about twice Pebble's memory. Loading 10,000 1 KB items took a
// CGO_ENABLED=0 build to a peak RSS of 96 MiB against 65 MiB with cgo;
// with the tuner it is 57 MiB (TestHeapTuner checks the heap's goal).
//
// So in a build without cgo, after every collection the heap tuner sets
// the GC percentage that lets the heap grow by GOGC% of its part that is
// not Pebble's (at least minOwnHeap, the runtime's own floor for a small
// heap), as the heap of a cgo build does. Garbage is then collected as
// often as in a cgo build, which is what GOGC asked for.
//
// A memtable is one large allocation (its arena), written from the start.
// The runtime zeroes a large allocation when any of its pages were used
// before and not returned to the system (Go's mheap.initSpan), and then
// every page of it is resident, written or not: a 16 MB arena that holds
// 5 MB of writes costs 16 MB. Pages returned to the system come back
// zeroed by the kernel, so an allocation made only of them, or of fresh
// address space, is not cleared, and its unwritten pages stay unmapped.
// Pebble's memtables start at 256 KB and double up to MemTableSize, each a
// new allocation; at full size they are recycled. So while a store's
// memtables are still growing and it is being written, the tuner also
// returns the heap's free pages to the system (debug.FreeOSMemory) each
// time releaseAtLeast more has been written and as much is free, so that
// the next arena is likely to find them released. Loading 10,000 1 KB
// items into a release build peaked at 65–67 MiB in 9 of 41 runs and at
// 54–57 MiB in the rest; with the release, at 53–54 MiB in 39 of 40 runs
// and at 65 MiB in one (an arena allocated before a release had run), for
// 13 more collections and about 2% more CPU time during that load.

// releaseAtLeast is how much must have been written since the tuner last
// returned free heap pages to the system, and how much must be free, for
// it to do so again while memtables grow. Each release is a full
// collection, so a store makes at most memTableSize/releaseAtLeast of
// them while its memtables grow.
const releaseAtLeast = 1 << 20

// minOwnHeap is the least heap the tuner counts as the process's own: the
// runtime does not collect a heap smaller than 4 MB either (at GOGC=100).
const minOwnHeap = 4 << 20

// heapTuner is the process's one tuner: the GC percentage is a process
// setting, and several stores can be open at once (tests, backups).
var heapTuner struct {
	mu sync.Mutex
	// stores are the open stores whose manual memory is on the Go heap.
	stores map[*Store]struct{}
	// base is the GC percentage the process had when the first store
	// opened (GOGC), restored when the last one closes.
	base int
	// running is set while a cleanup is armed to run after the next
	// collection.
	running bool
}

// manualMemory is how much of the Go heap s holds as Pebble's manual
// memory (its memtables and block cache), and how much of that is
// memtables.
func (s *Store) manualMemory() (manual, memtables uint64) {
	m := s.db.Metrics()
	return uint64(m.BlockCache.Size) + m.MemTable.Size, m.MemTable.Size
}

// filling reports whether s's memtables, memtables bytes in all, are still
// growing to their full size and releaseAtLeast has been written to them
// since the last release (see releaseFree). The caller holds heapTuner.mu.
func (s *Store) filling(memtables uint64) bool {
	return memtables < memTableSize && s.written.Load()-s.releaseMark >= releaseAtLeast
}

// tuneHeap counts s's manual memory from the next collection on, in a
// build where that memory is on the Go heap.
func tuneHeap(s *Store) {
	if !manualOnGoHeap {
		return
	}
	heapTuner.mu.Lock()
	defer heapTuner.mu.Unlock()
	if len(heapTuner.stores) == 0 {
		heapTuner.base = gogc()
		if heapTuner.base < 0 {
			return // GOGC=off: there is no growth to correct
		}
	}
	if heapTuner.stores == nil {
		heapTuner.stores = make(map[*Store]struct{})
	}
	heapTuner.stores[s] = struct{}{}
	if !heapTuner.running {
		heapTuner.running = true
		armHeapTuner()
	}
}

// untuneHeap stops counting s, before it closes (Metrics panics on a
// closed DB); with the last store gone, GOGC is as it was.
func untuneHeap(s *Store) {
	heapTuner.mu.Lock()
	defer heapTuner.mu.Unlock()
	if _, ok := heapTuner.stores[s]; !ok {
		return
	}
	delete(heapTuner.stores, s)
	if len(heapTuner.stores) == 0 {
		debug.SetGCPercent(heapTuner.base)
	}
}

// armHeapTuner has retuneHeap run once the next collection has found a
// new object unreachable, that is, after each collection.
func armHeapTuner() {
	sentinel := new(struct{ _ *byte }) // holds a pointer: not tiny-allocated, so it is collected on its own
	runtime.AddCleanup(sentinel, func(struct{}) { retuneHeap() }, struct{}{})
}

// retuneHeap sets the GC percentage for the heap the last collection
// left, and arms itself for the next one.
func retuneHeap() {
	heapTuner.mu.Lock()
	defer heapTuner.mu.Unlock()
	if len(heapTuner.stores) == 0 {
		heapTuner.running = false
		return
	}
	var manual uint64
	filling := false
	for s := range heapTuner.stores {
		m, memtables := s.manualMemory()
		manual += m
		filling = filling || s.filling(memtables)
	}
	debug.SetGCPercent(gcPercent(heapTuner.base, liveHeap(), manual))
	if filling {
		releaseFree()
	}
	armHeapTuner()
}

// releaseFree returns the heap's free pages to the system, in the
// background, when releaseAtLeast or more are free. The caller holds
// heapTuner.mu.
func releaseFree() {
	if runtimeMetric("/memory/classes/heap/free:bytes", 0) < releaseAtLeast {
		return
	}
	for s := range heapTuner.stores {
		s.releaseMark = s.written.Load()
	}
	// It collects first, and so runs this tuner again: not under the lock.
	go debug.FreeOSMemory()
}

// gcPercent is the GC percentage under which a heap of live bytes, manual
// of them Pebble's, grows by base% of the rest (at least minOwnHeap)
// before the next collection: live·p/100 = own·base/100.
func gcPercent(base int, live, manual uint64) int {
	if live == 0 || base <= 0 {
		return base
	}
	own := uint64(minOwnHeap)
	if manual < live {
		own = max(own, live-manual)
	}
	if own >= live {
		return base
	}
	return max(int(uint64(base)*own/live), 1)
}

// liveHeap is the heap the last collection found reachable.
func liveHeap() uint64 { return runtimeMetric("/gc/heap/live:bytes", 0) }

// gogc is the process's GC percentage as GOGC or debug.SetGCPercent left
// it, negative when collection is off.
func gogc() int {
	// The runtime reports its int32 setting converted to uint64: "off"
	// (-1) arrives as the largest value.
	return int(int32(runtimeMetric("/gc/gogc:percent", 100)))
}

// runtimeMetric reads one of the runtime's uint64 metrics, or gives
// otherwise where this Go has no such metric.
func runtimeMetric(name string, otherwise uint64) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return otherwise
	}
	return s[0].Value.Uint64()
}
