// SHA-256 and HMAC-SHA256 in plain JavaScript (FIPS 180-4, RFC 2104).
//
// The page signs with WebCrypto. Browsers offer WebCrypto only in a
// secure context (https, or http on localhost), so when the explorer is
// opened over plain http on another host the signer falls back to this.

const { initial, rounds } = constants();

/** constants derives the initial hash and the 64 round constants: the
 * first 32 bits of the fractional parts of the square roots of the first
 * 8 primes and of the cube roots of the first 64 primes. */
function constants() {
  const primes = [];
  for (let n = 2; primes.length < 64; n++) {
    if (primes.every((p) => n % p !== 0)) primes.push(n);
  }
  const fraction = (x) => ((x - Math.floor(x)) * 2 ** 32) >>> 0;
  return {
    initial: primes.slice(0, 8).map((p) => fraction(Math.sqrt(p))),
    rounds: primes.map((p) => fraction(Math.cbrt(p))),
  };
}

const rotr = (x, n) => (x >>> n) | (x << (32 - n));

/** pad appends the 0x80 marker, zeros and the bit length (big-endian). */
function pad(bytes) {
  const length = Math.ceil((bytes.length + 9) / 64) * 64;
  const out = new Uint8Array(length);
  out.set(bytes);
  out[bytes.length] = 0x80;
  const view = new DataView(out.buffer);
  const bits = bytes.length * 8;
  view.setUint32(length - 8, Math.floor(bits / 2 ** 32));
  view.setUint32(length - 4, bits >>> 0);
  return view;
}

/** compress runs one 64-byte block at offset into the state h. */
function compress(h, view, offset, w) {
  for (let i = 0; i < 16; i++) w[i] = view.getUint32(offset + i * 4);
  for (let i = 16; i < 64; i++) {
    const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
    const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
    w[i] = (w[i - 16] + s0 + w[i - 7] + s1) >>> 0;
  }
  let [a, b, c, d, e, f, g, k] = h;
  for (let i = 0; i < 64; i++) {
    const t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + rounds[i] + w[i];
    const t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    k = g;
    g = f;
    f = e;
    e = (d + t1) >>> 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) >>> 0;
  }
  [a, b, c, d, e, f, g, k].forEach((v, i) => {
    h[i] = (h[i] + v) >>> 0;
  });
}

/** sha256 returns the 32-byte digest of bytes (a Uint8Array). */
export function sha256(bytes) {
  const view = pad(bytes);
  const h = initial.slice();
  const w = new Uint32Array(64);
  for (let offset = 0; offset < view.byteLength; offset += 64) compress(h, view, offset, w);
  const out = new DataView(new ArrayBuffer(32));
  h.forEach((v, i) => out.setUint32(i * 4, v));
  return new Uint8Array(out.buffer);
}

/** hmacSha256 returns HMAC-SHA256(key, message), both Uint8Arrays. */
export function hmacSha256(key, message) {
  const block = new Uint8Array(64);
  block.set(key.length > 64 ? sha256(key) : key);
  const inner = new Uint8Array(64 + message.length);
  const outer = new Uint8Array(64 + 32);
  for (let i = 0; i < 64; i++) {
    inner[i] = block[i] ^ 0x36;
    outer[i] = block[i] ^ 0x5c;
  }
  inner.set(message, 64);
  outer.set(sha256(inner), 64);
  return sha256(outer);
}
