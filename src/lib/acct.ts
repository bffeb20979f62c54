/** A handle as people type it: `alice`, `@alice@host`, `acct:alice@host[:port]`. */
const ACCT =
  /^([A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?)(?:@((?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::\d{1,5})?))?$/;

/** The username and host (lower case; null when none is given) of a typed handle, or null when it is not one. */
export function splitAcct(typed: string): { username: string; host: string | null } | null {
  const m = ACCT.exec(
    typed
      .trim()
      .replace(/^acct:/i, "")
      .replace(/^@/, ""),
  );
  return m ? { username: m[1]!, host: m[2]?.toLowerCase() ?? null } : null;
}
