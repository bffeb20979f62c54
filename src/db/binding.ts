/**
 * The database binding itself: a wrapper around it (a test's round-trip counter) names what it wraps under this
 * symbol, so what is kept per database (run-time settings, the schema check) is kept once for both.
 */
const WRAPPED_BINDING = Symbol.for("starling.wrappedBinding");

export function bindingOf(b: D1Database): D1Database {
  // Wrappers nest (the Worker's meter around a test's counter): the innermost is the database.
  for (let inner = b; ; b = inner) {
    inner = (b as unknown as Record<symbol, D1Database | undefined>)[WRAPPED_BINDING] ?? b;
    if (inner === b) return b;
  }
}
