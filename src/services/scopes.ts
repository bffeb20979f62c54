/** OAuth scope strings: parsing, validation and the subset rule. */

const SCOPE_PATTERN = /^(read|write|follow|push|admin)(:[a-z_]+)*$/;

/** Scopes are separated by whitespace (the standard) or commas (some clients). */
export function parseScopes(value: string | undefined | null): string[] {
  if (!value) return [];
  return [...new Set(value.split(/[\s,+]+/).filter(Boolean))];
}

export function invalidScopes(scopes: string[]): string[] {
  return scopes.filter((s) => !SCOPE_PATTERN.test(s));
}

/** Every requested scope must be covered by one the app registered. */
export function withinScopes(requested: string[], allowed: string[]): boolean {
  return requested.every((r) => allowed.some((a) => scopeGrants(a, r)));
}

/** Token scope `held` grants `required` when equal or when `required` is a narrower form (`read` ⊇ `read:accounts`). */
function scopeGrants(held: string, required: string): boolean {
  return required === held || required.startsWith(held + ":");
}

export function hasAnyScope(held: string[], alternatives: string[]): boolean {
  return alternatives.some((req) => held.some((h) => scopeGrants(h, req)));
}
