/**
 * multipart/form-data read here rather than by workerd's `formData()` (issue 42): the body is read once into one
 * buffer (up to a limit, refused with 413 past it), its parts are found with the runtime's native byte search
 * (`Buffer.indexOf`), and a file part is a view of that buffer, never decoded or copied on the way. A 12-megapixel
 * photo's upload spent most of its CPU in the parser and in a text copy of the body (bench/README.md).
 */
import { Buffer } from "node:buffer";
import { ApiError, badRequest } from "../lib/errors";
import { readBodyCapped } from "../lib/body";

export interface FormPart {
  name: string;
  /** Set for a file part (`filename=` in its Content-Disposition), even when empty. */
  filename?: string;
  /** The part's Content-Type, when it names one. */
  type: string;
  data: Uint8Array;
}

const malformed = () => badRequest("Malformed multipart body");
/** A part's headers are short: nothing further than this from its boundary is read as headers. */
const HEADER_WINDOW = 8_192;
const CR = 0x0d;
const LF = 0x0a;
const DASH = 0x2d;

/** The boundary a multipart Content-Type names (RFC 2046: 1 to 70 characters), or null. */
export function boundaryOf(contentType: string): string | null {
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^;\s]{1,70}))/i.exec(contentType);
  return m ? (m[1] ?? m[2])! : null;
}

/** The request's body, at most `limit` bytes: over it, 413 with `tooLarge` (lib/body.ts `readBodyCapped`). */
export async function readBytes(req: Request, limit: number, tooLarge: string): Promise<Uint8Array> {
  const bytes = await readBodyCapped(req, limit);
  if (!bytes) throw new ApiError(413, tooLarge);
  return bytes;
}

/** `name="value"` parameters of a header value (quoted with backslash escapes, or bare); names lower-cased. */
function headerParams(value: string): Map<string, string> {
  const params = new Map<string, string>();
  for (const m of value.matchAll(/;\s*([^=\s;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g)) {
    params.set(m[1]!.toLowerCase(), m[2] !== undefined ? m[2].replace(/\\(.)/g, "$1") : m[3]!.trim());
  }
  return params;
}

/** RFC 5987's `filename*=UTF-8''…`, when a client sends only that form. */
function extendedValue(value: string | undefined): string | undefined {
  const m = value === undefined ? null : /^utf-8'[^']*'(.*)$/i.exec(value);
  if (!m) return undefined;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return undefined;
  }
}

const utf8 = new TextDecoder();

/**
 * The parts of a multipart body (RFC 7578), in order; 400 when it is not one (no opening boundary, a part
 * without its closing boundary, headers without their end). Parts without a name are left out, as are a
 * preamble and an epilogue.
 */
export function parseMultipart(body: Uint8Array, boundary: string): FormPart[] {
  const buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  // Every delimiter but the first is preceded by a line break; the first may open the body.
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  let at = buf.subarray(0, delimiter.length - 2).equals(delimiter.subarray(2)) ? -2 : buf.indexOf(delimiter);
  if (at === -1) throw malformed();
  const parts: FormPart[] = [];
  for (;;) {
    let p = at + delimiter.length;
    if (buf[p] === DASH && buf[p + 1] === DASH) return parts;
    // Transport padding, then the line break that ends the delimiter line.
    while (buf[p] === 0x20 || buf[p] === 0x09) p++;
    if (buf[p] !== CR || buf[p + 1] !== LF) throw malformed();
    p += 2;
    let headers = "";
    let start: number;
    if (buf[p] === CR && buf[p + 1] === LF) start = p + 2;
    else {
      const end = buf.subarray(p, p + HEADER_WINDOW).indexOf("\r\n\r\n");
      if (end === -1) throw malformed();
      headers = utf8.decode(body.subarray(p, p + end));
      start = p + end + 4;
    }
    const next = buf.indexOf(delimiter, start);
    if (next === -1) throw malformed();
    let disposition = "";
    let type = "";
    for (const line of headers.split("\r\n")) {
      const colon = line.indexOf(":");
      const name = line.slice(0, colon).trim().toLowerCase();
      if (name === "content-disposition") disposition = line.slice(colon + 1);
      else if (name === "content-type") type = line.slice(colon + 1).trim();
    }
    const params = headerParams(disposition);
    const name = params.get("name");
    if (name !== undefined) {
      const filename = params.get("filename") ?? extendedValue(params.get("filename*"));
      parts.push({ name, ...(filename !== undefined ? { filename } : {}), type, data: body.subarray(start, next) });
    }
    at = next;
  }
}

/** A text part's value. */
export const partText = (part: FormPart) => utf8.decode(part.data);
