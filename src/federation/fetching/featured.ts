/**
 * A remote account's pinned statuses as its `featured` collection lists them, read when the account is fetched
 * (resolved or refreshed): the first items (bounded), embedded as Mastodon and Starling serve them, stored when
 * they are the actor's own (attributed to it, on its origin) and marked pinned; the account's other remote pins
 * end. Best effort and bounded in time: a collection that cannot be read changes nothing.
 */
import type { DocumentLoader } from "@fedify/fedify";
import { Article, Note, Question, type Actor } from "@fedify/vocab";
import { sql } from "drizzle-orm";
import { db } from "../../db/client";
import { config } from "../../env";
import { applyNotePolicies } from "../../services/federation-policies";
import type { AccountRow } from "../../services/accounts";
import { storeRemoteNote } from "../../services/remote-statuses";
import { parseNote } from "../documents/parse-note";
import { setRemotePin } from "../../services/remote-pins";
import type { ResolveEnv } from "./resolve-env";
import { within } from "../../lib/within";

/** Featured items read per fetch (Mastodon pins at most 5). */
const FEATURED_MAX = 5;

export async function syncFeatured(
  r: ResolveEnv,
  actor: Actor,
  account: AccountRow,
  loader: DocumentLoader,
  ms: number,
): Promise<void> {
  if (!actor.featuredId || account.domain === null) return;
  const origin = new URL(account.uri).origin;
  const read = async () => {
    const collection = await actor.getFeatured({ documentLoader: loader, suppressError: true });
    if (!collection) return null;
    const items: (Note | Article | Question)[] = [];
    for await (const item of collection.getItems({ documentLoader: loader, suppressError: true })) {
      if (items.length >= FEATURED_MAX) break;
      const own =
        (item instanceof Note || item instanceof Article || item instanceof Question) &&
        item.attributionId?.href === account.uri &&
        item.id?.origin === origin;
      if (own) items.push(item);
    }
    return items;
  };
  const items = await within(read(), ms);
  if (!items) return;
  const d = db(r.env);
  const uris: string[] = [];
  for (const item of items) {
    const note = applyNotePolicies(d, account.domain, await parseNote(item, account, account.domain));
    await storeRemoteNote(d, account, note, {
      inlineFanoutMax: config(r.env).inlineFanoutMax,
      base: r.base,
      requested: true,
    });
    if (await setRemotePin(d, account, note.uri, true)) uris.push(note.uri);
  }
  // What is no longer featured is no longer pinned.
  await d.run(
    sql`UPDATE statuses SET pinned_at = NULL WHERE account_id = ${account.id} AND local = 0 AND pinned_at IS NOT NULL
      AND uri NOT IN (SELECT value FROM json_each(${JSON.stringify(uris)}))`,
  );
}
