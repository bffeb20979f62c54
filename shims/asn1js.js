// In place of `asn1js` (58 KiB minified) for the bundle and the tests (wrangler.toml `[alias]`, vitest.config.ts):
// Fedify's `exportMultibaseKey` writes an RSA public key (PKCS#1: a SEQUENCE of two INTEGERs given as bytes) with
// it, and nothing else in the bundle uses it. scripts/shims.test.ts compares the bytes with the real asn1js.
import { writeDer } from "./der.js";

const bytesOf = (value) =>
  value instanceof Uint8Array
    ? value
    : ArrayBuffer.isView(value)
      ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
      : new Uint8Array(value);

export class Integer {
  /** @param {{ isHexOnly: true, valueHex: ArrayBuffer | ArrayBufferView }} options */
  constructor({ isHexOnly, valueHex }) {
    if (!isHexOnly) throw new Error("the asn1js shim writes integers given as bytes only");
    this.content = bytesOf(valueHex);
  }
  encode() {
    return writeDer(0x02, this.content);
  }
  toBER() {
    return toBuffer(this.encode());
  }
}

export class Sequence {
  /** @param {{ value: { encode(): Uint8Array }[] }} options */
  constructor({ value }) {
    this.value = value;
  }
  encode() {
    const parts = this.value.map((v) => v.encode());
    const content = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      content.set(p, at);
      at += p.length;
    }
    return writeDer(0x30, content);
  }
  toBER() {
    return toBuffer(this.encode());
  }
}

const toBuffer = (bytes) => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
