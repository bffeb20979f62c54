/**
 * Identifiers: 128 bits, 48 of milliseconds then 80 random, written as 26 Crockford base-32 characters.
 * Fixed length and an alphabet in ASCII order make string order equal time order, so `max_id`/`since_id`/
 * `min_id` are plain comparisons on an index.
 */
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
export const ID_LENGTH = 26;
export const ID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;

function encodeTime(ms: number): string {
  let out = "";
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

/** A new identifier for the given time (now by default). */
export function newId(time: number = Date.now()): string {
  const random = crypto.getRandomValues(new Uint8Array(16));
  let out = encodeTime(time);
  for (let i = 0; i < 16; i++) out += ALPHABET[random[i] & 31];
  return out;
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

export function isId(value: string): boolean {
  return ID_PATTERN.test(value);
}
