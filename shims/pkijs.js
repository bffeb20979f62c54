// In place of `pkijs` (296 KiB minified) for the bundle and the tests (wrangler.toml `[alias]`, vitest.config.ts):
// Fedify's `importSpki` reads one thing with it, the algorithm OID of a SubjectPublicKeyInfo, to choose the Web
// Crypto algorithm; Web Crypto itself then parses and checks the whole key. scripts/shims.test.ts compares this
// with the real pkijs.
import { readDer } from "./der.js";

export class PublicKeyInfo {
  /** @param {ArrayBuffer | ArrayBufferView} ber */
  static fromBER(ber) {
    const spki = readDer(ber, 0, 0x30); // SubjectPublicKeyInfo ::= SEQUENCE {
    const algorithm = readDer(spki.bytes, spki.start, 0x30); //  algorithm AlgorithmIdentifier ::= SEQUENCE {
    const oid = readDer(spki.bytes, algorithm.start, 0x06); //    algorithm OBJECT IDENTIFIER, ...
    return { algorithm: { algorithmId: decodeOid(oid.bytes.subarray(oid.start, oid.end)) } };
  }
}

/** @param {Uint8Array} bytes */
function decodeOid(bytes) {
  if (bytes.length === 0) throw new Error("empty object identifier");
  const arcs = [];
  let value = 0n;
  for (let i = 0; i < bytes.length; i++) {
    value = (value << 7n) | BigInt(bytes[i] & 0x7f);
    if ((bytes[i] & 0x80) === 0) {
      arcs.push(value);
      value = 0n;
    } else if (i === bytes.length - 1) throw new Error("truncated object identifier");
  }
  const first = arcs[0] < 80n ? arcs[0] / 40n : 2n;
  return [first, arcs[0] - first * 40n, ...arcs.slice(1)].join(".");
}
