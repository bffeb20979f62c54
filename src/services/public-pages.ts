/**
 * What the public HTML pages may show, for a visitor nobody knows (a browser, a search engine, a link preview):
 * always the anonymous viewer of the one visibility rule (`visibleTo(null)`, through `accountPage` and
 * `hydrate`), so a page never shows more than an anonymous API client could read. Each page costs a fixed number
 * of D1 round trips: a profile 2 (the account, then its page of statuses hydrated in one statement), a status or
 * a hashtag 1.
 */
import type { DB } from "../db/client";
import { isId } from "../db/ids";
import type { Page } from "../db/paging";
import { findByAcct, type AccountWithUser } from "./accounts";
import { NICKNAME_PATTERN } from "../lib/nicknames";
import { hydrate, type Hydrated } from "./hydrate";
import { accountPage, tagPage, walkEnd } from "./timelines";

export const PROFILE_PAGE_SIZE = 20;

const pageBefore = (maxId?: string): Page => ({
  limit: PROFILE_PAGE_SIZE,
  ...(maxId && isId(maxId) ? { max_id: maxId } : {}),
});

export interface PublicProfile {
  account: AccountWithUser;
  h: Hydrated;
  /** Status ids of the page, newest first. */
  ids: string[];
}

/** A local, active account a page may show (one round trip): what a frontend's page needs for its tags. */
export async function publicAccount(d: DB, username: string, localHost: string): Promise<AccountWithUser | null> {
  if (!NICKNAME_PATTERN.test(username)) return null;
  const found = await findByAcct(d, username, localHost);
  return found && found.account.domain === null && !found.account.deactivated ? found : null;
}

/**
 * A local, active account and its newest public statuses. As Mastodon's public profile: public posts only
 * (unlisted ones stay off listings), no replies to others, no reblogs.
 */
export async function publicProfile(
  d: DB,
  username: string,
  localHost: string,
  maxId?: string,
): Promise<PublicProfile | null> {
  const found = await publicAccount(d, username, localHost);
  if (!found) return null;
  const source = accountPage(null, found.account.id, pageBefore(maxId), {
    excludeReplies: true,
    excludeReblogs: true,
    excludeVisibilities: ["unlisted"],
  });
  const h = await hydrate(d, source, null);
  return { account: found, h, ids: h.page };
}

/** One status (or reblog) as the anonymous viewer loads it; the renderer drops it when it may not be seen. */
export async function publicStatus(d: DB, id: string): Promise<Hydrated | null> {
  if (!isId(id)) return null;
  return hydrate(d, [id], null);
}

/**
 * The newest public statuses with a hashtag (the anonymous public tag timeline): where hashtag links lead.
 * `older`: the cursor of the next page, if there may be one (past the walk when the page came back short).
 */
export async function publicTag(
  d: DB,
  tag: string,
  maxId?: string,
): Promise<{ h: Hydrated; ids: string[]; older: string | null }> {
  const name = tag.replace(/^#/, "");
  const page = pageBefore(maxId);
  const h = await hydrate(d, tagPage(null, name, page, {}), null);
  const older = h.page.length === page.limit ? h.page.at(-1) : (await walkEnd(d, null, page, {}, name)).older;
  return { h, ids: h.page, older: older ?? null };
}
