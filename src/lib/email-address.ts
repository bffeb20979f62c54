/**
 * What an e-mail address must look like here: no whitespace, one `@` with something before it, and a domain
 * with a dot between two characters (what `/^[^\s@]+@[^\s@]+\.[^\s@]+$/` said). Checked by hand in linear
 * time: that pattern backtracked quadratically, and an address of 100,000 dots cost 20 seconds of CPU.
 */

/** The longest address taken (RFC 5321's path limit, as Mastodon's and Pleroma's forms take it). */
export const EMAIL_MAX = 320;

export function isEmailAddress(s: string): boolean {
  if (s.length > EMAIL_MAX || /\s/.test(s)) return false;
  const at = s.indexOf("@");
  if (at < 1 || s.indexOf("@", at + 1) !== -1) return false;
  const domain = s.slice(at + 1);
  const dot = domain.indexOf(".", 1);
  return dot > 0 && dot < domain.length - 1;
}
