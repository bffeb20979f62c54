// The few DER (X.690) steps the pkijs and asn1js shims need: read one element, write one element.

/**
 * The element of `tag` at `offset`: where its content starts and ends. Throws on another tag, an indefinite or
 * overlong length, or content running past the input.
 * @param {ArrayBuffer | ArrayBufferView} input
 * @param {number} offset
 * @param {number} tag
 */
export function readDer(input, offset, tag) {
  const bytes =
    input instanceof Uint8Array
      ? input
      : ArrayBuffer.isView(input)
        ? new Uint8Array(input.buffer, input.byteOffset, input.byteLength)
        : new Uint8Array(input);
  if (offset + 2 > bytes.length) throw new Error("truncated DER");
  if (bytes[offset] !== tag) throw new Error(`expected DER tag ${tag}, got ${bytes[offset]}`);
  let length = bytes[offset + 1];
  let start = offset + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4 || start + count > bytes.length) throw new Error("bad DER length");
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + bytes[start + i];
    start += count;
  }
  const end = start + length;
  if (end > bytes.length) throw new Error("truncated DER");
  return { bytes, start, end };
}

/**
 * One element: tag, length, content.
 * @param {number} tag
 * @param {Uint8Array} content
 */
export function writeDer(tag, content) {
  const n = content.length;
  const length = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : n < 0x10000 ? [0x82, n >> 8, n & 0xff] : null;
  if (length === null) throw new Error("DER content too long");
  const out = new Uint8Array(1 + length.length + n);
  out[0] = tag;
  out.set(length, 1);
  out.set(content, 1 + length.length);
  return out;
}
