/**
 * Who may quote a post (issue 46): the one rule, read by posting (services/quotes.ts), by the answer to another
 * server's `QuoteRequest`, and by the Status entity's `quote_approval` (render/status.ts). Mastodon 4.5's: an
 * author may quote their own posts but direct ones; anyone else only public and unlisted posts, as the post's
 * policy says (`followers`: the author's followers; NULL, a remote post that says nothing: only its author).
 */
import type { QuotePolicy, Visibility } from "../db/schema";

export const QUOTE_POLICIES = ["public", "followers", "nobody"] as const satisfies readonly QuotePolicy[];

/** Mastodon's `quote_approval.current_user`: `unknown` for an anonymous viewer. */
export type QuoteApproval = "automatic" | "manual" | "denied" | "unknown";

export function quoteApproval(
  s: { accountId: string; visibility: Visibility; quotePolicy: QuotePolicy | null },
  quoterId: string | null,
  followsAuthor: boolean,
): QuoteApproval {
  if (quoterId === null) return "unknown";
  if (s.visibility === "direct" || s.visibility === "list") return "denied";
  if (quoterId === s.accountId) return "automatic";
  if (s.visibility !== "public" && s.visibility !== "unlisted") return "denied";
  const policy = s.quotePolicy ?? "nobody";
  return policy === "public" || (policy === "followers" && followsAuthor) ? "automatic" : "denied";
}

/** A new post's policy: what was asked (or the author's default), `nobody` for posts only some may see. */
export function postPolicy(visibility: Visibility, asked: QuotePolicy): QuotePolicy {
  return visibility === "public" || visibility === "unlisted" ? asked : "nobody";
}

/** Mastodon's `quote_approval.automatic` of a policy. */
export const automaticOf = (p: QuotePolicy | null): string[] =>
  p === "public" ? ["public"] : p === "followers" ? ["followers"] : [];

/** The id of the stamp (`QuoteAuthorization`) this instance serves for an approved quote of a local post. */
export const stampUri = (quotedAuthorUri: string, quoteId: string) =>
  `${quotedAuthorUri}/quote_authorizations/${quoteId}`;
