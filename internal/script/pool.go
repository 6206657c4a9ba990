package script

import "sync"

// Making a runtime (the sandbox, the prelude, the script's function)
// costs far more than most calls, so a runtime that finished a call
// cleanly waits in the pool for the next call of the same script. A
// runtime only ever serves one script (one version of it, in one
// container): what a call leaves in its globals is seen by later calls of
// that script, never by another's.

// maxIdleRuntimes bounds the idle runtimes kept, over all scripts.
const maxIdleRuntimes = 32

// maxIdlePerScript bounds those kept for one script: as many as calls of
// it that ran at once, up to this.
const maxIdlePerScript = 4

// pool keeps idle runtimes by script.
type pool struct {
	mu   sync.Mutex
	max  int
	n    int
	idle map[string][]*runtime
}

func newPool(max int) *pool { return &pool{max: max, idle: map[string][]*runtime{}} }

// get takes an idle runtime for the script key names, or returns nil.
func (p *pool) get(key string) *runtime {
	p.mu.Lock()
	defer p.mu.Unlock()
	rts := p.idle[key]
	if len(rts) == 0 {
		return nil
	}
	rt := rts[len(rts)-1]
	if len(rts) == 1 {
		delete(p.idle, key)
	} else {
		p.idle[key] = rts[:len(rts)-1]
	}
	p.n--
	return rt
}

// put gives back a runtime whose call ended cleanly. When the pool is
// full, another script's runtime makes room.
func (p *pool) put(rt *runtime) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle[rt.key]) >= maxIdlePerScript {
		return
	}
	if p.n >= p.max {
		for k, rts := range p.idle {
			if k == rt.key {
				continue
			}
			if len(rts) == 1 {
				delete(p.idle, k)
			} else {
				p.idle[k] = rts[:len(rts)-1]
			}
			p.n--
			break
		}
		if p.n >= p.max {
			return
		}
	}
	p.idle[rt.key] = append(p.idle[rt.key], rt)
	p.n++
}
