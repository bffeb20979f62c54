/**
 * WebM and Matroska without their metadata, without re-encoding (issue 44): `Tags` (where a recorder writes the
 * place, device and date) and `Attachments` (any file, a cover picture), the segment's `Title` and `DateUTC`, and
 * track names are each overwritten in place by an EBML Void element of the same length, as are the `SeekHead`
 * entries that pointed at them: nothing moves, so no seek or cue position needs fixing. Duration, size and frame
 * rate are read on the way (`Info`, `Tracks`). Bounded: an element whose size runs past its parent is refused
 * (422), the walk goes down only through the elements named here, and it reads at most `MAX_ELEMENTS` elements.
 */
import { patched, type Edit } from "./image-metadata";
import { brokenFile, fraction, type CleanMedia, type MediaFacts } from "./isobmff";

const EBML = 0x1a45dfa3;
const SEGMENT = 0x18538067;
const SEEK_HEAD = 0x114d9b74;
const SEEK = 0x4dbb;
const SEEK_ID = 0x53ab;
const INFO = 0x1549a966;
const TRACKS = 0x1654ae6b;
const TRACK_ENTRY = 0xae;
const CLUSTER = 0x1f43b675;
const TAGS = 0x1254c367;
const ATTACHMENTS = 0x1941a470;
/** Elements that may follow a cluster at its level (the end of a cluster of unknown size). */
const LEVEL_ONE = new Set([SEEK_HEAD, INFO, TRACKS, CLUSTER, 0x1c53bb6b, TAGS, ATTACHMENTS, 0x1043a770, EBML, SEGMENT]);
/** Info's `Title` and `DateUTC`; a track's `Name`. */
const INFO_METADATA = new Set([0x7ba9, 0x4461]);
const TRACK_NAME = 0x536e;

/** Far more than the elements a walk of a real file reads (clusters of a known size are skipped whole). */
const MAX_ELEMENTS = 1_000_000;

interface Element {
  id: number;
  start: number;
  from: number;
  to: number;
}

/** An EBML element's header at `at`: its ID (with its length marker, as the specification writes IDs) and size. */
function header(b: Uint8Array, at: number, limit: number): { id: number; from: number; size: number | null } {
  const first = b[at];
  if (first === undefined || first === 0) throw brokenFile();
  const idLength = Math.clz32(first) - 23;
  if (idLength > 4 || at + idLength >= limit) throw brokenFile();
  let id = 0;
  for (let i = 0; i < idLength; i++) id = id * 256 + b[at + i]!;
  const s = at + idLength;
  const lead = b[s]!;
  if (lead === 0) throw brokenFile();
  const sizeLength = Math.clz32(lead) - 23;
  if (s + sizeLength > limit) throw brokenFile();
  let size = lead & (0xff >> sizeLength);
  let unknown = size === 0xff >> sizeLength;
  for (let i = 1; i < sizeLength; i++) {
    size = size * 256 + b[s + i]!;
    unknown &&= b[s + i] === 0xff;
  }
  return { id, from: s + sizeLength, size: unknown ? null : size };
}

/** An EBML Void element exactly as long as `el` (ID 0xEC, an 8-byte size when it fits, else a shorter one). */
function voided(el: Element): Edit {
  const length = el.to - el.start;
  const bytes = new Uint8Array(length);
  bytes[0] = 0xec;
  const sizeLength = Math.min(8, length - 1);
  let rest = length - 1 - sizeLength;
  for (let i = sizeLength; i >= 1; i--) {
    bytes[i] = rest % 256;
    rest = Math.floor(rest / 256);
  }
  bytes[1]! |= 0x80 >> (sizeLength - 1);
  return { at: el.start, bytes };
}

const uint = (b: Uint8Array, el: Element) => {
  let v = 0;
  for (let i = el.from; i < el.to && i < el.from + 8; i++) v = v * 256 + b[i]!;
  return v;
};

const float = (b: Uint8Array, el: Element) => {
  const view = new DataView(b.buffer, b.byteOffset + el.from, el.to - el.from);
  return el.to - el.from === 4 ? view.getFloat32(0) : el.to - el.from === 8 ? view.getFloat64(0) : 0;
};

/** Frames per second from a frame's duration in nanoseconds, as ffprobe writes it ("30/1", "30000/1001"). */
function rateOf(ns: number): string {
  const fps = 1e9 / ns;
  if (Math.abs(fps - Math.round(fps)) < 0.01) return `${Math.round(fps)}/1`;
  const ntsc = Math.round((fps * 1001) / 1000);
  if (Math.abs(fps - (ntsc * 1000) / 1001) < 0.01) return `${ntsc * 1000}/1001`;
  return fraction(Math.round(fps * 1000), 1000);
}

export function cleanMatroska(b: Uint8Array): CleanMedia {
  const edits: Edit[] = [];
  const facts: MediaFacts = {};
  let seen = 0;
  let video = false;
  let segment = false;
  /** The elements from `from` to `to`; one of unknown size is a cluster running to the next element of level 1. */
  const each = function* (from: number, to: number): Generator<Element> {
    let at = from;
    while (at < to) {
      if (++seen > MAX_ELEMENTS) throw brokenFile();
      const h = header(b, at, to);
      let end: number;
      if (h.size !== null) end = h.from + h.size;
      else if (h.id === SEGMENT) end = to;
      else if (h.id === CLUSTER) {
        end = h.from;
        while (end < to) {
          const c = header(b, end, to);
          if (LEVEL_ONE.has(c.id)) break;
          if (c.size === null || ++seen > MAX_ELEMENTS) throw brokenFile();
          end = c.from + c.size;
        }
      } else throw brokenFile();
      if (end > to) throw brokenFile();
      yield { id: h.id, start: at, from: h.from, to: end };
      at = end;
    }
  };
  let scale = 1_000_000;
  let duration = 0;
  for (const top of each(0, b.length)) {
    if (top.id !== SEGMENT) continue;
    segment = true;
    for (const el of each(top.from, top.to)) {
      if (el.id === TAGS || el.id === ATTACHMENTS) edits.push(voided(el));
      else if (el.id === SEEK_HEAD) {
        for (const seek of each(el.from, el.to)) {
          if (seek.id !== SEEK) continue;
          for (const s of each(seek.from, seek.to)) {
            if (s.id !== SEEK_ID) continue;
            const target = uint(b, s);
            if (target === TAGS || target === ATTACHMENTS) edits.push(voided(seek));
          }
        }
      } else if (el.id === INFO) {
        for (const i of each(el.from, el.to)) {
          if (INFO_METADATA.has(i.id)) edits.push(voided(i));
          else if (i.id === 0x2ad7b1) scale = uint(b, i) || scale;
          else if (i.id === 0x4489) duration = float(b, i);
        }
      } else if (el.id === TRACKS) {
        for (const entry of each(el.from, el.to)) {
          if (entry.id !== TRACK_ENTRY) continue;
          let type = 0;
          let frame = 0;
          let size: [number, number] | null = null;
          for (const t of each(entry.from, entry.to)) {
            if (t.id === TRACK_NAME) edits.push(voided(t));
            else if (t.id === 0x83) type = uint(b, t);
            else if (t.id === 0x23e383) frame = uint(b, t);
            else if (t.id === 0xe0) {
              let [w, h] = [0, 0];
              for (const v of each(t.from, t.to)) {
                if (v.id === 0xb0) w = uint(b, v);
                else if (v.id === 0xba) h = uint(b, v);
              }
              if (w && h) size = [w, h];
            }
          }
          if (type !== 1) continue;
          video = true;
          if (size && !facts.width) [facts.width, facts.height] = size;
          if (frame && !facts.frameRate) facts.frameRate = rateOf(frame);
        }
      }
    }
  }
  if (!segment) throw brokenFile();
  if (duration > 0 && Number.isFinite(duration)) {
    facts.duration = Math.round(((duration * scale) / 1e9) * 1000) / 1000;
    if (facts.duration) facts.bitrate = Math.round((b.length * 8) / facts.duration);
  }
  return { ...patched(b, edits), facts, video };
}
