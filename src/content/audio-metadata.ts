/**
 * FLAC, MP3 and WAV without their tags, in place (issue 44): what a recorder or phone writes there (title, artist,
 * the place, the device, the date, a cover picture) is zeroed under a type every reader skips, so nothing moves.
 * - FLAC: `VORBIS_COMMENT` and `PICTURE` metadata blocks become `PADDING` blocks of the same length;
 * - MP3: an ID3v2 tag at the start keeps its header and becomes padding (ID3v2 allows zeros after its frames); an
 *   ID3v1 tag (the last 128 bytes, `TAG`) is zeroed;
 * - WAV: `LIST` (INFO), `id3 `, `bext` (broadcast: originator, date), `iXML` and `_PMX` (XMP) chunks become `JUNK`.
 * Bounded: one walk of the blocks or chunks, each size checked against the file (422 past it).
 */
import { patched, u32le, type Edit, type Parts } from "./image-metadata";
import { brokenFile } from "./isobmff";

const ascii = (b: Uint8Array, at: number, n: number) => String.fromCharCode(...b.subarray(at, at + n));

/** `length` bytes at `at`: `head` then zeros. */
const zeroed = (at: number, length: number, head: number[] = []): Edit => {
  const bytes = new Uint8Array(length);
  bytes.set(head);
  return { at, bytes };
};

function flac(b: Uint8Array): Edit[] {
  const edits: Edit[] = [];
  let at = 4;
  for (;;) {
    if (at + 4 > b.length) throw brokenFile();
    const last = b[at]! & 0x80;
    const type = b[at]! & 0x7f;
    const length = (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!;
    if (at + 4 + length > b.length) throw brokenFile();
    // PADDING (1), with the last-block flag kept.
    if (type === 4 || type === 6) edits.push(zeroed(at, 4 + length, [last | 1, b[at + 1]!, b[at + 2]!, b[at + 3]!]));
    at += 4 + length;
    if (last) return edits;
  }
}

function mp3(b: Uint8Array): Edit[] {
  const edits: Edit[] = [];
  if (ascii(b, 0, 3) === "ID3") {
    if (b.length < 10) throw brokenFile();
    // A synchsafe size (7 bits a byte), not counting the header (nor a footer, flag 0x10: its 10 bytes zeroed too).
    const size = ((b[6]! & 0x7f) << 21) | ((b[7]! & 0x7f) << 14) | ((b[8]! & 0x7f) << 7) | (b[9]! & 0x7f);
    const footer = b[5]! & 0x10 ? 10 : 0;
    if (10 + size + footer > b.length) throw brokenFile();
    // The header kept, its flags cleared (no extended header, no footer, no unsynchronisation): the rest padding.
    edits.push(zeroed(0, 10 + size + footer, [...b.subarray(0, 5), 0, ...b.subarray(6, 10)]));
  }
  if (b.length >= 128 && ascii(b, b.length - 128, 3) === "TAG") edits.push(zeroed(b.length - 128, 128));
  return edits;
}

/** WAV chunks that carry tags. */
const WAV_TAGS = new Set(["LIST", "id3 ", "ID3 ", "bext", "iXML", "_PMX"]);

function wav(b: Uint8Array): Edit[] {
  const edits: Edit[] = [];
  const end = Math.min(b.length, 8 + u32le(b, 4));
  for (let at = 12; at + 8 <= end;) {
    const length = u32le(b, at + 4);
    if (at + 8 + length > b.length) throw brokenFile();
    if (WAV_TAGS.has(ascii(b, at, 4)))
      edits.push(zeroed(at, 8 + length, [0x4a, 0x55, 0x4e, 0x4b, ...b.subarray(at + 4, at + 8)]));
    at += 8 + length + (length & 1);
  }
  return edits;
}

/** The file without its tags, as parts. */
export function cleanAudio(b: Uint8Array, mime: "audio/flac" | "audio/mpeg" | "audio/wav"): Parts {
  return patched(b, mime === "audio/flac" ? flac(b) : mime === "audio/mpeg" ? mp3(b) : wav(b));
}
