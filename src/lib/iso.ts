/** A time in milliseconds as the APIs write times (ISO 8601, UTC). */
export const iso = (ms: number) => new Date(ms).toISOString();
