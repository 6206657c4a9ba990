// Package auth checks Cosmos DB master-key signatures, and seals and
// opens resource tokens (resourcetoken.go).
//
// A request is signed with HMAC-SHA256 over five lines: the verb, the
// resource type, the resource link, the x-ms-date header (all but the
// link lower-cased) and an empty line, keyed by the base64-decoded master
// key. The Authorization header carries
// "type=master&ver=1.0&sig=<base64>", URL-encoded as a whole by the SDKs.
// The resource type and link are derived from the request path (see
// ResourceOf).
package auth

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// EmulatorKey is the Cosmos DB emulator's well-known master key.
const EmulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// MaxSkew is how far x-ms-date may be from the server's time.
const MaxSkew = 15 * time.Minute

// Verifier checks signatures made with the account's keys: as the service
// has them, a primary and a secondary read-write key and a primary and a
// secondary read-only key, the last three optional. It is safe for
// concurrent use, and its keys can be replaced while it serves
// (SetKeys), so operators can roll from one key to the other with no
// downtime. It reuses HMAC states and the parse of the last date seen,
// because every request pays for this check.
type Verifier struct {
	// AcceptAAD accepts well-formed "type=aad" bearer tokens without
	// verifying them, as the emulator does.
	AcceptAAD bool

	ring     atomic.Pointer[keyring]
	scratch  sync.Pool // of *scratch
	lastDate atomic.Pointer[parsedDate]
}

// Keys are an account's master keys, base64; only Primary is required.
type Keys struct {
	Primary, Secondary          string
	ReadOnly, SecondaryReadOnly string
}

// keyring is the keys in the order a signature is checked against them:
// the read-write ones first, so the common case costs one HMAC.
type keyring struct {
	keys []*signingKey
	// tokenKeys are the resource-token keys of the read-write keys,
	// the primary's first (resourcetoken.go); opened are the tokens
	// they opened, by Authorization header. A new ring, made when the
	// keys change, starts with none.
	tokenKeys [][]byte
	openedMu  sync.RWMutex
	opened    map[string][]byte
}

// signingKey is one key with a pool of HMAC states keyed with it.
type signingKey struct {
	raw      []byte
	readOnly bool
	macs     sync.Pool // of hash.Hash
}

// scratch is what one check needs besides the stack: buffers for the
// unescaped token, the signed payload and the signature, which would
// escape to the heap through the hash's interface.
type scratch struct {
	token   []byte
	payload []byte
	sum     [sha256.Size]byte
}

type parsedDate struct {
	raw string
	t   time.Time
}

// NewVerifier returns a verifier for one base64 master key.
func NewVerifier(masterKey string) (*Verifier, error) {
	return NewVerifierKeys(Keys{Primary: masterKey})
}

// NewVerifierKeys returns a verifier for an account's keys.
func NewVerifierKeys(k Keys) (*Verifier, error) {
	v := &Verifier{}
	v.scratch.New = func() any { return &scratch{} }
	if err := v.SetKeys(k); err != nil {
		return nil, err
	}
	return v, nil
}

// SetKeys replaces the keys, at once for every request checked after it
// returns. Invalid keys change nothing.
func (v *Verifier) SetKeys(k Keys) error {
	if k.Primary == "" {
		return fmt.Errorf("auth: the primary master key is required")
	}
	ring := &keyring{opened: map[string][]byte{}}
	for _, key := range []struct {
		name, value string
		readOnly    bool
	}{{"primary", k.Primary, false}, {"secondary", k.Secondary, false}, {"read-only", k.ReadOnly, true}, {"secondary read-only", k.SecondaryReadOnly, true}} {
		if key.value == "" {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(key.value)
		if err != nil || len(raw) == 0 {
			return fmt.Errorf("auth: the %s key is not valid base64", key.name)
		}
		sk := &signingKey{raw: raw, readOnly: key.readOnly}
		sk.macs.New = func() any { return hmac.New(sha256.New, sk.raw) }
		ring.keys = append(ring.keys, sk)
		if !key.readOnly {
			ring.tokenKeys = append(ring.tokenKeys, tokenKey(raw))
		}
	}
	v.ring.Store(ring)
	return nil
}

// Error says why a request is not authorized; its message is meant for
// the client.
type Error struct{ Message string }

func (e *Error) Error() string { return e.Message }

func unauthorized(format string, args ...any) error {
	return &Error{Message: fmt.Sprintf(format, args...)}
}

// Verify checks a request's Authorization header. resourceType and link
// come from ResourceOf; now is the server's wall-clock time. readOnly
// says the request was signed with a read-only key, which may only read:
// the caller knows which requests write.
func (v *Verifier) Verify(verb, resourceType, link, date, authorization string, now time.Time) (readOnly bool, err error) {
	if authorization == "" {
		return false, unauthorized("Required Header authorization is missing. Ensure a valid Authorization token is passed.")
	}
	if date == "" {
		return false, unauthorized("Required Header x-ms-date is missing. Ensure the request carries x-ms-date in RFC 1123 format, e.g. 'Sun, 22 Nov 2026 05:19:17 GMT'.")
	}
	t, err := v.parseDate(date)
	if err != nil {
		return false, unauthorized("The x-ms-date header %q is not an RFC 1123 date such as 'Sun, 22 Nov 2026 05:19:17 GMT'.", date)
	}
	if d := now.Sub(t); d > MaxSkew || d < -MaxSkew {
		return false, unauthorized("The authorization token is not valid at the current time: x-ms-date %q is more than %v from the server time %s. Check the client's clock.", date, MaxSkew, now.UTC().Format(time.RFC1123))
	}
	s := v.getScratch()
	defer v.putScratch(s)
	// The raw token, then room to unescape it after, which fails as
	// url.QueryUnescape does and then leaves the raw one as it was.
	s.token = slices.Grow(s.token[:0], 2*len(authorization))
	token := append(s.token, authorization...)
	if strings.Contains(authorization, "%") {
		if dec, ok := queryUnescape(token[len(token):], authorization); ok {
			token = dec
		}
	}
	typ, sigText := tokenFields(token)
	switch string(typ) {
	case "master":
	case "aad":
		if v.AcceptAAD && bytes.Count(sigText, []byte(".")) == 2 {
			return false, nil
		}
		return false, unauthorized("AAD tokens are not accepted by this server; sign requests with the master key (or start the server with --accept-aad).")
	case "resource":
		// The gateway checks resource tokens (OpenResourceToken) before
		// master-key signatures; one reaching here is on a route that
		// takes only a key.
		return false, unauthorized("This request needs a master-key signature; a resource token cannot authorize it.")
	default:
		return false, unauthorized("The authorization header is malformed; expected type=master&ver=1.0&sig=<signature>.")
	}
	var sigBuf [64]byte
	if base64.StdEncoding.DecodedLen(len(sigText)) > len(sigBuf) {
		return false, unauthorized("The authorization signature is too long for an HMAC-SHA256 signature.")
	}
	n, err := base64.StdEncoding.Decode(sigBuf[:], sigText)
	if err != nil || n == 0 {
		return false, unauthorized("The authorization signature is not valid base64.")
	}
	for _, k := range v.ring.Load().keys {
		if hmac.Equal(sigBuf[:n], s.sign(k, s.sum[:0], verb, resourceType, link, date)) {
			return k.readOnly, nil
		}
	}
	return false, unauthorized("The input authorization token can't serve the request. The wrong key is being used or the expected payload is not built as per the protocol. Server used the following payload to sign: '%s'", strings.ReplaceAll(payload(verb, resourceType, link, date), "\n", "\\n"))
}

// VerifyBearer checks an Authorization header of the form "Bearer
// <master key>": what a scraper that cannot sign requests (Prometheus)
// can send. It accepts the master keys only (read-only ones too: what it
// guards is read), compared in constant time.
func (v *Verifier) VerifyBearer(authorization string) error {
	scheme, token, ok := strings.Cut(authorization, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return unauthorized("Required Header authorization is missing. Send a master-key signature, or \"Bearer <master key>\".")
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(token))
	if err == nil {
		for _, k := range v.ring.Load().keys {
			if hmac.Equal(key, k.raw) {
				return nil
			}
		}
	}
	return unauthorized("The bearer token is not one of this server's master keys.")
}

// IsBearer reports whether an Authorization header uses the Bearer
// scheme, which VerifyBearer checks, rather than a Cosmos token.
func IsBearer(authorization string) bool {
	scheme, _, _ := strings.Cut(authorization, " ")
	return strings.EqualFold(scheme, "Bearer")
}

// tokenFields reads the type and sig of "type=master&ver=1.0&sig=…" once
// it is decoded. It does not unescape again: a base64 signature holds
// '+', which query parsing would turn into a space.
func tokenFields(token []byte) (typ, sig []byte) {
	for rest := token; len(rest) > 0; {
		var part []byte
		part, rest, _ = bytes.Cut(rest, []byte("&"))
		k, val, _ := bytes.Cut(part, []byte("="))
		switch string(k) {
		case "type":
			typ = val
		case "sig":
			sig = val
		}
	}
	return typ, sig
}

// queryUnescape appends s decoded as url.QueryUnescape decodes it ('+'
// is a space) to dst; ok is false where url.QueryUnescape fails.
func queryUnescape(dst []byte, s string) (_ []byte, ok bool) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return dst, false
			}
			dst = append(dst, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		case '+':
			dst = append(dst, ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst, true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// parseDate parses x-ms-date, remembering the last one: concurrent
// requests from one client mostly share the same second.
func (v *Verifier) parseDate(date string) (time.Time, error) {
	if p := v.lastDate.Load(); p != nil && p.raw == date {
		return p.t, nil
	}
	t, err := time.Parse(time.RFC1123, date)
	if err == nil {
		v.lastDate.Store(&parsedDate{raw: date, t: t})
	}
	return t, err
}

func payload(verb, resourceType, link, date string) string {
	return strings.ToLower(verb) + "\n" + strings.ToLower(resourceType) + "\n" + link + "\n" + strings.ToLower(date) + "\n\n"
}

func (v *Verifier) getScratch() *scratch { return v.scratch.Get().(*scratch) }

// putScratch returns s to the pool, without buffers a huge header grew.
func (v *Verifier) putScratch(s *scratch) {
	if cap(s.token) > 4<<10 {
		s.token = nil
	}
	if cap(s.payload) > 4<<10 {
		s.payload = nil
	}
	v.scratch.Put(s)
}

// sign appends the signature of the request with key k to dst.
func (s *scratch) sign(k *signingKey, dst []byte, verb, resourceType, link, date string) []byte {
	p := appendLower(s.payload[:0], verb)
	p = append(p, '\n')
	p = appendLower(p, resourceType)
	p = append(p, '\n')
	p = append(p, link...)
	p = append(p, '\n')
	p = appendLower(p, date)
	p = append(p, '\n', '\n')
	s.payload = p
	mac := k.macs.Get().(hash.Hash)
	mac.Reset()
	mac.Write(p)
	dst = mac.Sum(dst)
	k.macs.Put(mac)
	return dst
}

func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// Sign returns the Authorization header value for a request signed with
// the primary key, as an SDK would send it. The server uses it for
// nothing; tests and tools do.
func (v *Verifier) Sign(verb, resourceType, link, date string) string {
	s := v.getScratch()
	defer v.putScratch(s)
	sig := base64.StdEncoding.EncodeToString(s.sign(v.ring.Load().keys[0], nil, verb, resourceType, link, date))
	return url.QueryEscape("type=master&ver=1.0&sig=" + sig)
}

// PartitionKeyDeleteOp is the path, under a container, of delete by
// partition key.
const PartitionKeyDeleteOp = "operations/partitionkeydelete"

// ErrBadPath is returned by ResourceOf for a path that is not valid.
var ErrBadPath = errors.New("auth: malformed path")

// ResourceOf derives the signed resource type and link from an escaped
// URL path. Segments are split before they are unescaped, so an id
// holding %2F stays one segment. An even number of segments names a
// resource (type = the second-to-last segment, link = the whole path); an
// odd number names a feed (type = the last segment, link = its parent).
// Offers are signed with the lower-cased offer id.
func ResourceOf(escapedPath string) (resourceType, link string, err error) {
	p := strings.Trim(escapedPath, "/")
	if p == "" {
		return "", "", nil
	}
	// Delete by partition key (dbs/{db}/colls/{coll}/operations/
	// partitionkeydelete) is signed as its container: the JS SDK's
	// deleteAllItemsForPartitionKey signs resource type colls with the
	// container's link.
	if coll, ok := strings.CutSuffix(p, "/"+PartitionKeyDeleteOp); ok && strings.Count(coll, "/") == 3 {
		p = coll
	}
	if !strings.Contains(p, "%") {
		return resourceOfPlain(p)
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		u, err := url.PathUnescape(s)
		if err != nil {
			return "", "", ErrBadPath
		}
		segs[i] = u
	}
	if len(segs)%2 == 0 {
		resourceType = segs[len(segs)-2]
		link = strings.Join(segs, "/")
		// Offers are addressed by id, and the SDKs sign an offer with its
		// lower-cased id alone.
		if resourceType == "offers" {
			link = strings.ToLower(segs[len(segs)-1])
		}
		return resourceType, link, nil
	}
	return segs[len(segs)-1], strings.Join(segs[:len(segs)-1], "/"), nil
}

// resourceOfPlain is ResourceOf for a trimmed path with nothing escaped,
// without allocating: the common case on every request.
func resourceOfPlain(p string) (resourceType, link string, err error) {
	last := strings.LastIndexByte(p, '/')
	if strings.Count(p, "/")%2 == 1 { // an even number of segments
		prev := strings.LastIndexByte(p[:last], '/')
		resourceType = p[prev+1 : last]
		if resourceType == "offers" {
			return resourceType, strings.ToLower(p[last+1:]), nil
		}
		return resourceType, p, nil
	}
	if last < 0 {
		return p, "", nil
	}
	return p[last+1:], p[:last], nil
}
