// Package ttl is Cosmos DB's Time-To-Live policy as pure functions:
// validating container defaultTtl and item ttl values, the effective ttl of
// an item, its expiry instant, and whether it is visible at a given time.
//
// Visible is called from exactly one place, the engine's visible-items
// reader, which every read path goes through; nothing else decides
// whether an item has expired. The rules and Ebb's decisions where Cosmos
// is silent are those of the TTL contract:
//
//   - Container default: absent or null = off; -1 = on with no default;
//     1..2147483647 = on, items expire that many seconds after _ts.
//   - Item ttl, honoured only while the container's TTL is on: absent =
//     inherit the default; -1 = never expire; 1..2147483647 = expire that
//     many seconds after _ts. Any other value is rejected with the exact
//     Cosmos message (InvalidItemTTL), also on a container with TTL off,
//     where a valid value is stored and takes effect if TTL is turned on.
//   - An item is expired when _ts + ttl <= now, in whole seconds, int64.
package ttl

import (
	"fmt"
	"math"
	"strconv"
)

// Max is the largest ttl or defaultTtl Cosmos accepts (int32 max).
const Max = math.MaxInt32

// Default is a container's defaultTtl.
//
// INVARIANT: Off (0), Forever (-1) or 1..Max.
type Default int64

const (
	// Off means the container has no defaultTtl: nothing expires.
	Off Default = 0
	// Forever means defaultTtl = -1: TTL is on but items expire only by
	// their own ttl.
	Forever Default = -1
)

// On reports whether the container's TTL is on.
func (d Default) On() bool { return d != Off }

// ItemTTL is an item's ttl as the engine keeps it beside the document.
//
// INVARIANT: Absent (0), Never (-1) or 1..Max.
type ItemTTL int32

const (
	// Absent means the item has no ttl (or, on a container with TTL off,
	// one that is not a valid value): it inherits the container default.
	Absent ItemTTL = 0
	// Never means ttl = -1: the item does not expire.
	Never ItemTTL = -1
)

// ExpireAt returns the instant (epoch seconds) at which an item written at
// ts expires, and false when it never does under def.
func ExpireAt(ts int64, item ItemTTL, def Default) (int64, bool) {
	if !def.On() {
		return 0, false
	}
	switch {
	case item > 0:
		return ts + int64(item), true
	case item == Never:
		return 0, false
	case def > 0:
		return ts + int64(def), true
	}
	return 0, false
}

// Visible reports whether an item written at ts with ttl item is visible
// at now (epoch seconds) in a container whose default is def.
func Visible(ts int64, item ItemTTL, def Default, now int64) bool {
	at, expires := ExpireAt(ts, item, def)
	return !expires || now < at
}

// InvalidItemTTL is the error for an item ttl that a TTL-enabled container
// does not accept. Its message is Cosmos's, word for word.
type InvalidItemTTL struct {
	// Raw is the value as the client wrote it (JSON text).
	Raw string
}

func (e *InvalidItemTTL) Error() string {
	return fmt.Sprintf("The input ttl '%s' is invalid. Ensure to provide a nonzero positive integer less than or equal to '%d', or '-1' which means never expire.", e.Raw, Max)
}

// InvalidDefault is the error for a container defaultTtl out of range.
type InvalidDefault struct {
	Raw string
}

func (e *InvalidDefault) Error() string {
	return fmt.Sprintf("The input defaultTtl '%s' is invalid. Ensure to provide a nonzero positive integer less than or equal to '%d', '-1' which means items never expire by default, or remove the property to turn Time to Live off.", e.Raw, Max)
}

// ErrIndexingNone is Cosmos's error for TTL on a container that indexes
// nothing (either way round).
var ErrIndexingNone = fmt.Errorf("Indexing mode value cannot be 'none' when 'defaultTtl' is specified in the collection")

// ParseItemTTL interprets the raw JSON value of an item's ttl property.
// present is false when the item has no ttl property at all. It returns
// the value and ok=false when the value is not a valid ttl.
func ParseItemTTL(raw []byte) (ItemTTL, bool) {
	n, ok := Integral(raw)
	if !ok || (n != -1 && (n < 1 || n > Max)) {
		return Absent, false
	}
	return ItemTTL(n), true
}

// CheckItemTTL validates an item's ttl for a container with default def.
// raw is the JSON value, nil when the item has no ttl. The value is
// validated whether or not the container's TTL is on: the service answers
// 400 for "ttl": -10 on a container with no defaultTtl, in single writes
// and in bulk and batch operations (the official SDKs' bulk tests expect
// it; the TTL contract's decision 1), and Ebb applies the same rule to
// every value there. With TTL off a valid ttl is stored and has no effect.
func CheckItemTTL(raw []byte, def Default) (ItemTTL, error) {
	if raw == nil {
		return Absent, nil
	}
	if v, ok := ParseItemTTL(raw); ok {
		return v, nil
	}
	return Absent, &InvalidItemTTL{Raw: display(raw)}
}

// ParseDefault interprets a container's defaultTtl; raw is nil when the
// property is absent. JSON null is off, like absence.
func ParseDefault(raw []byte) (Default, error) {
	if raw == nil || string(raw) == "null" {
		return Off, nil
	}
	n, ok := Integral(raw)
	if !ok || (n != -1 && (n < 1 || n > Max)) {
		return Off, &InvalidDefault{Raw: display(raw)}
	}
	return Default(n), nil
}

// Integral parses a JSON number whose value is an integer (10, 10.0 and
// 1e1 are all 10). Anything else, or a magnitude beyond float64's exact
// integer range, is not integral.
func Integral(raw []byte) (int64, bool) {
	if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		return 0, false
	}
	// raw comes from a document that already passed JSON validation, so
	// it is a JSON number and ParseFloat's wider syntax never applies.
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return 0, false
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// display renders a raw ttl the way Cosmos echoes it: strings without
// their quotes, everything else as written.
func display(raw []byte) string {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		return string(raw[1 : n-1])
	}
	return string(raw)
}
