/**
 * A remote post's `interactionPolicy` for replies, likes and boosts (issue 49; GoToSocial's `canReply`,
 * `canLike`, `canAnnounce` with `automaticApproval` / `manualApproval`), read into the compact form stored on the
 * post (`statuses.interaction_policy`): only the interactions it restricts, with the public and the author's own
 * collections named by word (`public`, `followers`, `following`). A post that lets everyone do all three, or says
 * nothing, stores NULL. GoToSocial's older terms (`always` / `approvalRequired`) are not read: Fedify reads only
 * the current ones, which GoToSocial has published beside them since 0.19.
 */
import { PUBLIC_COLLECTION, type InteractionRule as APRule, type Object as APObject } from "@fedify/vocab";
import type { InteractionKind, InteractionRule, InteractionRules, QuotePolicy } from "../../db/schema";
import { readQuotePolicy } from "./interaction-policy";

const PUBLIC = new Set([PUBLIC_COLLECTION.href, "as:Public", "Public"]);
/** Entries kept per list: a policy names a few actors; a longer one is hostile or a mistake. */
const MAX_ENTRIES = 64;
const MAX_URI = 2048;

/** The author's collections and the public as words, other http(s) actor ids as they are. */
function entries(urls: URL[], author: { uri: string; followersUrl: string | null }): string[] {
  const out = new Set<string>();
  for (const u of urls.slice(0, MAX_ENTRIES)) {
    const href = u.href;
    if (PUBLIC.has(href)) out.add("public");
    else if (author.followersUrl && href === author.followersUrl) out.add("followers");
    else if (href === `${author.uri}/following`) out.add("following");
    else if (/^https?:/.test(href) && href.length <= MAX_URI) out.add(href);
  }
  return [...out];
}

function rule(r: APRule | null, author: { uri: string; followersUrl: string | null }): InteractionRule | null {
  if (!r) return null;
  const auto = entries(r.automaticApprovals, author);
  const manual = entries(r.manualApprovals, author);
  // An empty rule is GoToSocial's default (anyone); the public without conditions restricts nothing.
  if (auto.length === 0 && manual.length === 0) return null;
  if (auto.includes("public") && manual.length === 0) return null;
  return { auto, manual };
}

/** What the policy restricts; null when nothing (or no policy, or one that does not parse). */
export function readInteractionRules(
  object: APObject,
  author: { uri: string; followersUrl: string | null },
): InteractionRules | null {
  let policy;
  try {
    policy = object.interactionPolicy;
  } catch {
    return null;
  }
  if (!policy) return null;
  const rules: InteractionRules = {};
  const read: [InteractionKind, APRule | null][] = [
    ["reply", policy.canReply],
    ["like", policy.canLike],
    ["announce", policy.canAnnounce],
  ];
  for (const [kind, r] of read) {
    const restricted = rule(r, author);
    if (restricted) rules[kind] = restricted;
  }
  return Object.keys(rules).length ? rules : null;
}

/** Both policies a remote post carries: who may quote it, and who may reply, like and boost. */
export function readPolicies(
  object: APObject,
  author: { uri: string; followersUrl: string | null },
): { quotePolicy: QuotePolicy | null; interactionPolicy: InteractionRules | null } {
  return {
    quotePolicy: readQuotePolicy(object, author.followersUrl),
    interactionPolicy: readInteractionRules(object, author),
  };
}
