/**
 * GoToSocial's and Mastodon 4.5's `interactionPolicy` (FEP-044f for `canQuote`), both ways: what every local
 * post says (who may quote it, from its quote policy; replies, likes and boosts open to all), and the quote policy
 * read from a remote post's. Fedify writes the JSON-LD terms (`gts:` https://gotosocial.org/ns#, FEP-044f's).
 */
import { InteractionPolicy, InteractionRule, Link, PUBLIC_COLLECTION, type Object as APObject } from "@fedify/vocab";
import type { QuotePolicy } from "../../db/schema";

const PUBLIC = new Set([PUBLIC_COLLECTION.href, "as:Public", "Public"]);

/** A local post's policy: `canQuote` by its quote policy (`nobody`: its author alone), the rest to everyone. */
export function interactionPolicy(policy: QuotePolicy | null, authorUri: string, followers: URL): InteractionPolicy {
  const everyone = () => new InteractionRule({ automaticApproval: PUBLIC_COLLECTION });
  const quoters = policy === "public" ? PUBLIC_COLLECTION : policy === "followers" ? followers : new URL(authorUri);
  return new InteractionPolicy({
    canQuote: new InteractionRule({ automaticApproval: quoters }),
    canReply: everyone(),
    canLike: everyone(),
    canAnnounce: everyone(),
  });
}

/** A remote post's quote policy as its `canQuote` says (null: it says nothing, so only its author may). */
export function readQuotePolicy(object: APObject, followersUrl: string | null): QuotePolicy | null {
  let rule: InteractionRule | null = null;
  try {
    rule = object.interactionPolicy?.canQuote ?? null;
  } catch {
    return null;
  }
  if (!rule) return null;
  const automatic = rule.automaticApprovals.map((u) => u.href);
  if (automatic.some((u) => PUBLIC.has(u))) return "public";
  if (followersUrl && automatic.includes(followersUrl)) return "followers";
  return "nobody";
}

/** FEP-e232's link to a quoted object, for servers that read quotes only from tags (Misskey's relation). */
export function quoteLinkTag(quotedUri: string): Link {
  return new Link({
    mediaType: 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"',
    href: new URL(quotedUri),
    name: `RE: ${quotedUri}`,
    rel: "https://misskey-hub.net/ns#_misskey_quote",
  });
}
