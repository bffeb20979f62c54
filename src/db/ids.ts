import { sql, type SQL } from "drizzle-orm";

/**
 * Identifiers: 128 bits, 48 of milliseconds then 80 random, written as 26 Crockford base-32 characters.
 * Fixed length and an alphabet in ASCII order make string order equal time order, so `max_id`/`since_id`/
 * `min_id` are plain comparisons on an index.
 */
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const ID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;

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

/**
 * Sequence ids, for the rows whose ids clients read as numbers (notifications, bookmarks: Pleroma-FE 2.8 takes
 * notification ids and the bookmarks' Link cursors through `parseInt`, as Pleroma's are integers). Still strings
 * of fixed width (16 decimal digits) so string order is number order and the paginator needs nothing new, and
 * below 2^53 (until the year 2255) so they survive a JavaScript number. The value is the time in milliseconds
 * times 1000, or one more than the table's highest id when that is higher: allocated inside the INSERT
 * statement, which D1 runs alone, so ids are unique and increase in the order rows are written, even for a
 * set-based insert of many rows (`row_number()` numbers them) and even when many arrive in one millisecond.
 * Only ids made of digits count as the highest (`< ':'`, the character after '9'): a stray id of another form
 * sorting above them cannot reset the sequence.
 */
/** The SQL expression of the next sequence ids of `table` in an INSERT … SELECT made at time `t`. */
export function seqIds(table: "notifications" | "bookmarks", t: number): SQL {
  return sql`printf('%016d', max(CAST(${Math.trunc(t)} AS INTEGER) * 1000, coalesce((SELECT CAST(id AS INTEGER) FROM ${sql.identifier(table)} WHERE id < ':' ORDER BY id DESC LIMIT 1), 0) + 1) + row_number() OVER () - 1)`;
}

/**
 * A cursor over sequence ids as given: a ULID (what these rows had before, still held by clients and markers)
 * becomes the first sequence id of its millisecond; anything else is compared as it is.
 */
export function seqCursor(value: string | undefined): string | undefined {
  return value !== undefined && isId(value) ? String(idTime(value) * 1000).padStart(16, "0") : value;
}
