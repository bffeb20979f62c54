/** Reading a request body within a size limit: for the inbox and for multipart uploads alike. */

/**
 * The request's body, at most `limit` bytes whatever Content-Length says: null over it (before reading anything
 * when the declared length says so). Read into one buffer of the declared length where the stream allows it (a
 * BYOB reader: a few large reads instead of thousands of 4 KiB chunks), else chunk by chunk.
 */
export async function readBodyCapped(req: Request, limit: number): Promise<Uint8Array | null> {
  const header = req.headers.get("content-length");
  const declared = header === null ? null : Number(header);
  if (declared !== null && declared > limit) {
    await req.body?.cancel().catch(() => {});
    return null;
  }
  if (!req.body) return new Uint8Array(0);
  if (declared !== null && Number.isSafeInteger(declared)) {
    let byob: ReadableStreamBYOBReader | null = null;
    try {
      byob = req.body.getReader({ mode: "byob" });
    } catch {
      // A stream made in JavaScript (a request built in the same isolate) has no BYOB reader.
    }
    if (byob) {
      let buffer = new ArrayBuffer(declared);
      let at = 0;
      while (at < declared) {
        const { done, value } = await byob.read(new Uint8Array(buffer, at, declared - at));
        if (done || !value) break;
        buffer = value.buffer as ArrayBuffer;
        at += value.byteLength;
      }
      return new Uint8Array(buffer, 0, at);
    }
  }
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  size = 0;
  for (const c of chunks) {
    out.set(c, size);
    size += c.byteLength;
  }
  return out;
}
