/**
 * Who may read actors, statuses and collections over federation (Mastodon's authorized fetch / secure mode).
 * With `authorizedFetch` on, a GET must carry a valid HTTP Signature (else 401), and one from a rejected domain,
 * or from an actor (or a domain) the owner blocks, is refused (403). Off, everything public is served to anyone. An actor
 * asked for without a signature gets only what verifies its signatures (as Mastodon does), so that two servers
 * in this mode can still check each other's keys; the instance actor, WebFinger and NodeInfo are always open.
 */
import type { RequestContext } from "@fedify/fedify";
import { sql, type SQL } from "drizzle-orm";
import { config } from "../../env";
import { federationRejected } from "../../services/federation-policies";
import type { FederationData } from "../data";
import { authLoaders } from "./auth-loaders";
import { authenticatedSigner } from "./authenticate";

/** The owner of what is asked for, as SQL yielding a local account id (or NULL). */
export const ownerByUsername = (username: string) =>
  sql`(SELECT id FROM accounts WHERE acct_key = lower(${username}) AND domain IS NULL)`;
export const ownerOfStatus = (statusId: string) => sql`(SELECT account_id FROM statuses WHERE id = ${statusId})`;

const signed = (req: Request) => req.headers.has("signature") || req.headers.has("signature-input");

/**
 * Whether the request may read what `owner` owns. A refusal of a known signer sets `refused` on the request's
 * data (answered 403 rather than Fedify's 401: signing again will not help).
 */
export async function fetchAllowed(ctx: RequestContext<FederationData>, owner: SQL): Promise<boolean> {
  // Off, anyone may read what is public (a refused signer would just ask again unsigned): nothing is verified.
  if (!config(ctx.data.env).authorizedFetch) return true;
  if (!signed(ctx.request)) return false;
  // Named as the inbox names an activity's actor (door/authenticate.ts): the signature verifies with the key it
  // names, and the key's owner lists it in its own document on the key's origin (not the key document's claim
  // alone, which would let any server speak for another's actors). One that does not verify counts as none.
  const id = await authenticatedSigner(ctx.request, authLoaders(ctx.data.env, ctx.data.d, ctx.contextLoader));
  if (!id) return false;
  const refuse = () => {
    ctx.data.refused = true;
    return false;
  };
  if (federationRejected(ctx.data.env, id.hostname)) return refuse();
  const blocked = await ctx.data.d.get<{ b: number }>(
    sql`SELECT (EXISTS (SELECT 1 FROM blocks b JOIN accounts a ON a.id = b.target_account_id WHERE b.account_id = ${owner} AND a.uri = ${id.href})
      OR EXISTS (SELECT 1 FROM domain_blocks WHERE account_id = ${owner} AND domain = ${id.host.toLowerCase()})) AS b`,
  );
  return blocked?.b ? refuse() : true;
}
