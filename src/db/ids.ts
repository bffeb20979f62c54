/**
 * Identifiers: 128 bits, 48 of milliseconds then 80 random, written as 26 Crockford base-32 characters.
 * Fixed length and an alphabet in ASCII order make string order equal time order, so `max_id`/`since_id`/
 * `min_id` are plain comparisons on an index.
 */
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
export const ID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;

function encodeTime(ms: number): string {
  let out = "";
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

let lastTime = -1;
let lastRandom: number[] = [];

/**
 * A new identifier for the given time (now by default). Within one isolate, ids made in the same millisecond
 * increase (the random part is incremented, as ULID's monotonic mode does), so rows written together keep the
 * order they were made in.
 */
export function newId(time: number = Date.now()): string {
  let random: number[];
  if (time === lastTime) {
    random = lastRandom.slice();
    for (let i = 15; i >= 0; i--) {
      if (random[i] < 31) {
        random[i]++;
        break;
      }
      random[i] = 0;
    }
  } else {
    random = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b & 31);
    // Leave headroom so increments within a millisecond never wrap around.
    random[0] &= 15;
  }
  lastTime = time;
  lastRandom = random;
  return encodeTime(time) + random.map((r) => ALPHABET[r]).join("");
}

/** The smallest identifier of a given time: a cursor for "everything since this moment". */
export function idFloor(time: number): string {
  return encodeTime(time) + "0".repeat(16);
}

/** The time an identifier was made. */
export function idTime(id: string): number {
  let ms = 0;
  for (let i = 0; i < 10; i++) ms = ms * 32 + ALPHABET.indexOf(id[i]);
  return ms;
}

/** Sorts ids newest first (ids sort by time). */
export const newestFirst = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0);

export function isId(value: string): boolean {
  return ID_PATTERN.test(value);
}

