package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// Resource tokens are what a permission hands an untrusted client
// instead of a key: "type=resource&ver=1.0&sig=<token>", URL-encoded as a
// whole by the SDKs as they encode a master-key signature. The service's
// tokens are opaque to clients, and so are Ebb's: the token is the
// permission's claims (the engine's payload, which names the permission
// and its version and when the token expires, and holds no key
// material) followed by an HMAC-SHA256 of them, in unpadded base64url.
// The HMAC key is derived from a read-write master key, so a token
// cannot be forged or altered without one, and rotating both keys
// revokes every token.

// tokenKeyLabel derives a master key's resource-token key: the HMAC of
// this label under the master key, so the key that signs requests never
// signs tokens.
const tokenKeyLabel = "ebb resource token v1"

// maxTokenPayload bounds the claims a token may carry.
const maxTokenPayload = 512

// tokenKey is the resource-token key of a master key.
func tokenKey(master []byte) []byte {
	m := hmac.New(sha256.New, master)
	m.Write([]byte(tokenKeyLabel))
	return m.Sum(nil)
}

// SealResourceToken returns the resource token that carries payload,
// signed with the primary key's token key.
func (v *Verifier) SealResourceToken(payload []byte) string {
	k := v.ring.Load().tokenKeys[0]
	m := hmac.New(sha256.New, k)
	m.Write(payload)
	sealed := m.Sum(append([]byte(nil), payload...))
	return "type=resource&ver=1.0&sig=" + base64.RawURLEncoding.EncodeToString(sealed)
}

// IsResourceToken reports whether an Authorization header is a resource
// token rather than a master-key signature.
func IsResourceToken(authorization string) bool {
	return strings.HasPrefix(authorization, "type=resource") || strings.HasPrefix(authorization, "type%3Dresource")
}

// OpenResourceToken checks the resource token in an Authorization header
// and returns the payload it carries: signed with any read-write key's
// token key, so tokens issued before the primary key was rolled over to
// the secondary stay valid while that key does.
//
// A token opened once is remembered (a client sends the same one on
// every request), until the keys change; the payload must not be
// modified.
func (v *Verifier) OpenResourceToken(authorization string) ([]byte, error) {
	ring := v.ring.Load()
	ring.openedMu.RLock()
	payload, ok := ring.opened[authorization]
	ring.openedMu.RUnlock()
	if ok {
		return payload, nil
	}
	payload, err := ring.openResourceToken(authorization)
	if err != nil {
		return nil, err
	}
	ring.openedMu.Lock()
	if len(ring.opened) >= maxOpened {
		clear(ring.opened) // they are opened again, no harm done
	}
	ring.opened[authorization] = payload
	ring.openedMu.Unlock()
	return payload, nil
}

// maxOpened bounds the tokens a key ring remembers.
const maxOpened = 4096

func (ring *keyring) openResourceToken(authorization string) ([]byte, error) {
	token := []byte(authorization)
	if strings.Contains(authorization, "%") {
		dec, ok := queryUnescape(nil, authorization)
		if !ok {
			return nil, errBadResourceToken
		}
		token = dec
	}
	typ, sig := tokenFields(token)
	if string(typ) != "resource" || len(sig) == 0 {
		return nil, errBadResourceToken
	}
	if base64.RawURLEncoding.DecodedLen(len(sig)) > maxTokenPayload+sha256.Size {
		return nil, errBadResourceToken
	}
	sealed, err := base64.RawURLEncoding.DecodeString(string(sig))
	if err != nil || len(sealed) <= sha256.Size {
		return nil, errBadResourceToken
	}
	payload, mac := sealed[:len(sealed)-sha256.Size], sealed[len(sealed)-sha256.Size:]
	for _, k := range ring.tokenKeys {
		m := hmac.New(sha256.New, k)
		m.Write(payload)
		if hmac.Equal(mac, m.Sum(nil)) {
			return payload, nil
		}
	}
	return nil, errBadResourceToken
}

// errBadResourceToken answers a resource token that is malformed, altered
// or signed with a key the server no longer has.
var errBadResourceToken = &Error{Message: "The resource token is not valid: it is malformed, was altered, or was issued with a key this server no longer has. Read the permission again for a new token."}
