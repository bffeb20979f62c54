/**
 * Ogg (Vorbis, Opus, Theora, Speex) without its comments, without re-encoding (issue 44). A stream's comment
 * header (`TITLE=`, `LOCATION=`, `ENCODER=` the device, `DATE=`, a cover picture) is replaced by one with the
 * encoder's vendor string alone and no comment; the stream's header pages are made anew from the same packets (255
 * segments a page at most, as many pages as before when the packets allow, the CRC computed), and when they are
 * fewer, the stream's later pages are renumbered (and their CRC computed again). Anything after the last page (an
 * ID3 tag appended) goes. A stream of another codec is kept as it is. Bounded: the pages are walked once; a page
 * running past the end, or headers not laid out as the codecs' specifications require, are refused (422).
 */
import { joined, u32le, type Parts } from "./image-metadata";
import { brokenFile, type MediaFacts } from "./isobmff";
import { ApiError } from "../lib/errors";

const le32 = (v: number) => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let k = 0; k < 8; k++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
    t[i] = r >>> 0;
  }
  return t;
})();

/** Ogg's page checksum (CRC-32, polynomial 0x04C11DB7, not reflected), over the page with its CRC field zero. */
export function oggCrc(page: Uint8Array): number {
  let crc = 0;
  for (let i = 0; i < page.length; i++) crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ page[i]!) & 0xff]!) >>> 0;
  return crc;
}

interface Page {
  start: number;
  end: number;
  flags: number;
  serial: number;
  seq: number;
  lacing: Uint8Array;
  data: number;
}

/** How a codec's stream starts: its identification packet's first bytes, its comment packet's prefix. */
const CODECS = [
  { id: "\x01vorbis", headers: 3, prefix: "\x03vorbis", framing: true },
  { id: "OpusHead", headers: 2, prefix: "OpusTags", framing: false },
  { id: "\x80theora", headers: 3, prefix: "\x81theora", framing: false },
  { id: "Speex   ", headers: 2, prefix: "", framing: false },
];

const refused = () =>
  new ApiError(422, "Validation failed: this Ogg file's comments (location, device) cannot be removed");

const text = (b: Uint8Array, from: number, length: number) => String.fromCharCode(...b.subarray(from, from + length));

function pages(b: Uint8Array): Page[] {
  const out: Page[] = [];
  let at = 0;
  while (at + 27 <= b.length && text(b, at, 4) === "OggS") {
    const count = b[at + 26]!;
    const lacing = b.subarray(at + 27, at + 27 + count);
    const data = at + 27 + count;
    let end = data;
    for (const l of lacing) end += l;
    if (end > b.length || b[at + 4] !== 0) throw brokenFile();
    out.push({ start: at, end, flags: b[at + 5]!, serial: u32le(b, at + 14), seq: u32le(b, at + 18), lacing, data });
    at = end;
  }
  if (!out.length) throw brokenFile();
  return out;
}

/** A page made anew (its CRC computed). */
function page(flags: number, granule: Uint8Array, serial: number, seq: number, lacing: number[], body: Uint8Array[]) {
  const size = body.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(27 + lacing.length + size);
  out.set([0x4f, 0x67, 0x67, 0x53, 0, flags]);
  out.set(granule, 6);
  out.set(le32(serial), 14);
  out.set(le32(seq), 18);
  out[26] = lacing.length;
  out.set(lacing, 27);
  let at = 27 + lacing.length;
  for (const p of body) {
    out.set(p, at);
    at += p.length;
  }
  out.set(le32(oggCrc(out)), 22);
  return out;
}

/** The comment packet with the vendor string kept and no comment (Vorbis's framing bit kept). */
function emptied(packet: Uint8Array, codec: (typeof CODECS)[number]): Uint8Array {
  const p = codec.prefix.length;
  if (packet.length < p + 8 || text(packet, 0, p) !== codec.prefix) throw refused();
  const vendorLength = u32le(packet, p);
  if (p + 4 + vendorLength + 4 > packet.length) throw refused();
  const vendor = vendorLength <= 256 ? packet.subarray(p + 4, p + 4 + vendorLength) : new Uint8Array(0);
  const out = new Uint8Array(p + 4 + vendor.length + 4 + (codec.framing ? 1 : 0));
  out.set(packet.subarray(0, p));
  out.set(le32(vendor.length), p);
  out.set(vendor, p + 4);
  if (codec.framing) out[out.length - 1] = 1;
  return out;
}

const cat = (parts: Uint8Array[]) => joined({ parts, size: parts.reduce((s, p) => s + p.length, 0) });

const NO_GRANULE = new Uint8Array(8).fill(0xff);

export function cleanOgg(b: Uint8Array): Parts & { facts: MediaFacts } {
  const all = pages(b);
  const facts: MediaFacts = {};
  const bySerial = new Map<number, Page[]>();
  for (const p of all) {
    const list = bySerial.get(p.serial) ?? [];
    list.push(p);
    bySerial.set(p.serial, list);
  }
  /** Pages replaced (by their start): their new bytes, or none (folded into an earlier page's). */
  const replaced = new Map<number, Uint8Array>();
  for (const [serial, list] of bySerial) {
    const bos = list[0]!;
    const codec = CODECS.find((c) => text(b, bos.data, c.id.length) === c.id);
    if (!codec) continue;
    // The identification header alone on the first page, as each codec requires.
    if (bos.lacing.filter((l) => l < 255).length !== 1 || bos.lacing[bos.lacing.length - 1] === 255) throw refused();
    const granules = list.filter((p) => b.subarray(p.start + 6, p.start + 14).some((v) => v !== 0xff));
    const last = granules[granules.length - 1];
    const granule = last ? u32le(b, last.start + 6) + u32le(b, last.start + 10) * 2 ** 32 : 0;
    if (codec.prefix === "OpusTags")
      facts.duration ??= Math.max(0, granule - (b[bos.data + 10]! | (b[bos.data + 11]! << 8))) / 48000;
    else if (codec.id === "\x01vorbis" && u32le(b, bos.data + 12)) facts.duration ??= granule / u32le(b, bos.data + 12);
    // The header packets after the first page, and the packets that end on their last page.
    const packets: Uint8Array[][] = [[]];
    let ended = 0;
    let n = 1;
    for (; n < list.length && ended < codec.headers - 1; n++) {
      const p = list[n]!;
      if (n === 1 && p.flags & 1) throw refused();
      let at = p.data;
      for (const l of p.lacing) {
        packets[packets.length - 1]!.push(b.subarray(at, at + l));
        at += l;
        if (l < 255) {
          ended++;
          packets.push([]);
        }
      }
    }
    const tail = list[n - 1]!;
    if (ended < codec.headers - 1 || tail.lacing[tail.lacing.length - 1] === 255) throw refused();
    packets.pop();
    const whole = packets.map(cat);
    whole[0] = emptied(whole[0]!, codec);
    // The packets' segments laid out on as many pages as before (at least one segment each, 255 at most).
    const segments: { bytes: Uint8Array; last: boolean }[] = [];
    for (const p of whole)
      for (let at = 0; ; at += 255) {
        segments.push({ bytes: p.subarray(at, Math.min(at + 255, p.length)), last: p.length - at < 255 });
        if (p.length - at < 255) break;
      }
    const before = n - 1;
    const count = Math.min(before, segments.length);
    const made: Uint8Array[] = [];
    let s = 0;
    for (let i = 0; i < count; i++) {
      const take = Math.min(255, segments.length - s - (count - 1 - i));
      const mine = segments.slice(s, s + take);
      const continued = s > 0 && !segments[s - 1]!.last;
      s += take;
      const isLast = i === count - 1;
      const ends = mine.some((x) => x.last);
      const granuleBytes = isLast ? b.subarray(tail.start + 6, tail.start + 14) : ends ? new Uint8Array(8) : NO_GRANULE;
      const flags = (continued ? 1 : 0) | (isLast ? tail.flags & 4 : 0);
      made.push(
        page(
          flags,
          granuleBytes,
          serial,
          list[1]!.seq + i,
          mine.map((x) => x.bytes.length),
          mine.map((x) => x.bytes),
        ),
      );
    }
    replaced.set(list[1]!.start, cat(made));
    for (let i = 2; i < n; i++) replaced.set(list[i]!.start, new Uint8Array(0));
    // Fewer pages: the stream's later pages renumbered.
    const fewer = before - count;
    if (fewer)
      for (const p of list.slice(n)) {
        const copy = b.slice(p.start, p.end);
        copy.set(le32(p.seq - fewer), 18);
        copy.set([0, 0, 0, 0], 22);
        copy.set(le32(oggCrc(copy)), 22);
        replaced.set(p.start, copy);
      }
  }
  // Replaced pages change length: the file is rebuilt from page views and new pages.
  const views: Uint8Array[] = [];
  for (const p of all) views.push(replaced.get(p.start) ?? b.subarray(p.start, p.end));
  const size = views.reduce((s, v) => s + v.length, 0);
  if (facts.duration !== undefined) {
    facts.duration = Math.round(facts.duration * 1000) / 1000;
    if (facts.duration > 0) facts.bitrate = Math.round((b.length * 8) / facts.duration);
    else delete facts.duration;
  }
  return { parts: views.filter((v) => v.length), size, facts };
}
