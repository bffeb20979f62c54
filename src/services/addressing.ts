/**
 * Who a status is addressed to on the fediverse, by visibility, as Mastodon addresses it (`TagManager#to`/`#cc`):
 * mentioned accounts go in `cc`, except for direct and list statuses, addressed to them alone. The one rule for
 * the served objects now and for delivery later.
 */
import type { Visibility } from "../db/schema";

export const PUBLIC_COLLECTION = "https://www.w3.org/ns/activitystreams#Public";

export interface AddressingInput {
  visibility: Visibility;
  /** The author's followers collection. */
  followers: string;
  /** Actor ids of the accounts mentioned in the status. */
  mentioned: string[];
  /**
   * For `list` and `direct` visibility: actor ids of everyone addressed at posting time (the status's recipients:
   * list members; for a direct status also conversation participants and the replied-to author, not only the
   * mentioned), so each server it is delivered to finds its users in `to`.
   */
  recipients?: string[];
}

export interface Addressing {
  to: string[];
  cc: string[];
}

const uniq = (xs: string[]) => [...new Set(xs)];

/** `to`/`cc` of a status; null for a local-only status, which never leaves this instance. */
export function addressing(a: AddressingInput): Addressing | null {
  const mentioned = uniq(a.mentioned);
  switch (a.visibility) {
    case "public":
      return { to: [PUBLIC_COLLECTION], cc: uniq([a.followers, ...mentioned]) };
    case "unlisted":
      return { to: [a.followers], cc: uniq([PUBLIC_COLLECTION, ...mentioned]) };
    case "private":
      return { to: [a.followers], cc: mentioned };
    case "direct":
      return { to: uniq([...(a.recipients ?? []), ...mentioned]), cc: [] };
    case "list":
      return { to: uniq([...(a.recipients ?? []), ...mentioned]), cc: [] };
    case "local":
      return null;
    default:
      return null;
  }
}
