/** Fixed limits that a service enforces and a renderer reports or applies. */

/** Statuses an account may pin (Mastodon's 5; the instance entity reports it). */
export const MAX_PINNED = 5;

/** How long the `Idempotency-Key` of a message dedupes a resend and is echoed as `idempotency_key`. */
export const IDEMPOTENCY_WINDOW_MS = 2 * 60_000;
