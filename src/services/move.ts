/**
 * Account aliases and moves (Pleroma's `aliases` and `move_account`, ActivityPub `Move`).
 *
 * Aliases are the account's `alsoKnownAs`: actor ids of its other accounts. A move from origin to target is
 * allowed only when the target lists the origin among its aliases. It is recorded on the origin
 * (`moved_to_account_id`, shown as `moved`), its local followers get a `move` notification in the same batch
 * (and, for a local origin, a `Move` goes to its remote followers through the outbox), and the cron job
 * `moveFollowers` then moves local followers who allow it (`allow_following_move`) to the target, a bounded
 * number per run: their follow of the origin ends, a follow (or request) of the target starts, as Pleroma's
 * `move_following` does. An incoming `Move` is handled the same way once the target, refetched, lists the origin.
 */
import type { Effects } from "./effects";
import { sql } from "drizzle-orm";
import type { Env } from "../env";
import { db, statement, type DB } from "../db/client";
import { withUser, type AccountRow, type AccountWithUser } from "./accounts";
import { accounts } from "../db/schema";
import { eq } from "drizzle-orm";
import { follow, unfollow } from "./graph";
import { notify } from "./notifications";
import { outboxWrite } from "./outbox";
import { profileUpdateWrites } from "./profile-updates";

/** Pleroma's answer when the target does not list the origin. */
export const NOT_ALIASED = "Target account must have the origin in `alsoKnownAs`";
/** Aliases an account may list (actor documents carry them all). */
const MAX_ALIASES = 16;
/** Followers moved per cron run (each is a few round trips). */
const MOVES_PER_RUN = 20;

/** The account's aliases as full nicknames (`user@host`), in the order they were added; unknown ids are skipped. */
export async function listAliases(d: DB, account: AccountRow, localHost: string): Promise<string[]> {
  if (account.alsoKnownAs.length === 0) return [];
  const rows = await d.all<{ uri: string; username: string; domain: string | null }>(
    sql`SELECT uri, username, domain FROM accounts WHERE uri IN (SELECT value FROM json_each(${JSON.stringify(account.alsoKnownAs)}))`,
  );
  const byUri = new Map(rows.map((r) => [r.uri, `${r.username}@${r.domain ?? localHost}`]));
  return account.alsoKnownAs.flatMap((u) => byUri.get(u) ?? []);
}

/** Adds `alias` to the account's aliases (already there: nothing changes). Answers an error message or null. */
export async function addAlias(
  d: DB,
  account: AccountRow,
  alias: AccountRow,
  t: number,
): Promise<{ error: string | null; effects: Effects }> {
  if (alias.id === account.id) return { error: "Can not add self as alias.", effects: {} };
  if (account.alsoKnownAs.includes(alias.uri)) return { error: null, effects: {} };
  if (account.alsoKnownAs.length >= MAX_ALIASES) return { error: "Too many aliases.", effects: {} };
  await setAliases(d, account, [...account.alsoKnownAs, alias.uri], t);
  return { error: null, effects: ALIASES_ANNOUNCED };
}

/** A change of aliases goes to the followers' servers (the actor's Update). */
const ALIASES_ANNOUNCED: Effects = { federate: true };

/** Removes `alias`; null when it was not an alias. */
export async function removeAlias(d: DB, account: AccountRow, alias: AccountRow, t: number): Promise<Effects | null> {
  if (!account.alsoKnownAs.includes(alias.uri)) return null;
  await setAliases(
    d,
    account,
    account.alsoKnownAs.filter((u) => u !== alias.uri),
    t,
  );
  return ALIASES_ANNOUNCED;
}

/** The aliases written, and (for a local account) announced to its followers in the same batch. */
async function setAliases(d: DB, account: AccountRow, alsoKnownAs: string[], t: number): Promise<void> {
  await d.$client.batch([
    statement(d, d.update(accounts).set({ alsoKnownAs, updatedAt: t }).where(eq(accounts.id, account.id))),
    ...profileUpdateWrites(d, account, { alsoKnownAs }, t),
  ]);
}

/**
 * Records the move of `origin` to `target` (local origin: `move_account`; remote: an incoming `Move`). Answers
 * Pleroma's error message when the target does not list the origin, else null, and what follows.
 */
export async function moveAccount(
  d: DB,
  origin: AccountRow,
  target: AccountRow,
  t: number,
): Promise<{ error: string | null; effects: Effects }> {
  if (origin.id === target.id || !target.alsoKnownAs.includes(origin.uri)) return { error: NOT_ALIASED, effects: {} };
  const followers = await d.all<{ id: string }>(
    sql`SELECT f.account_id AS id FROM follows f JOIN users u ON u.account_id = f.account_id WHERE f.target_account_id = ${origin.id}`,
  );
  await d.$client.batch([
    statement(
      d,
      sql`UPDATE accounts SET moved_to_account_id = ${target.id}, updated_at = ${t} WHERE id = ${origin.id}`,
    ),
    notify(d, { type: "move", to: followers.map((f) => f.id), from: origin.id, targetAccountId: target.id }),
    ...(origin.domain === null ? [outboxWrite(d, origin.id, { type: "Move", targetId: target.id }, t)] : []),
  ]);
  // The Move goes to the followers' servers; local followers are notified.
  return { error: null, effects: { push: true, federate: true } };
}

/** The account an account moved to, for its `moved` field (null when it has not moved or the target is gone). */
export async function movedTarget(d: DB, account: AccountRow): Promise<AccountWithUser | null> {
  if (!account.movedToAccountId) return null;
  const found = (await withUser(d).where(eq(accounts.id, account.movedToAccountId)).get()) ?? null;
  return found && !found.account.deactivated ? found : null;
}

/**
 * The cron job: moves up to `max` local followers of moved accounts who allow it to the target (their follow of
 * the origin ends first, so a refused follow, e.g. a block, is not retried). Answers how many were moved.
 */
export async function moveFollowers(env: Env, max = MOVES_PER_RUN): Promise<number> {
  const d = db(env);
  const rows = await d.all<{ follower: string; origin: string; target: string }>(
    sql`SELECT f.account_id AS follower, o.id AS origin, o.moved_to_account_id AS target
      FROM accounts o JOIN follows f ON f.target_account_id = o.id
      JOIN users u ON u.account_id = f.account_id AND u.allow_following_move = 1
      JOIN accounts fa ON fa.id = f.account_id AND fa.deactivated = 0
      WHERE o.moved_to_account_id IS NOT NULL AND f.account_id <> o.moved_to_account_id
      LIMIT ${max}`,
  );
  if (rows.length === 0) return 0;
  const ids = [...new Set(rows.flatMap((r) => [r.follower, r.origin, r.target]))];
  const found = await d
    .select()
    .from(accounts)
    .where(sql`${accounts.id} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`);
  const byId = new Map(found.map((a) => [a.id, a]));
  let moved = 0;
  for (const r of rows) {
    const [follower, origin, target] = [byId.get(r.follower), byId.get(r.origin), byId.get(r.target)];
    if (!follower || !origin) continue;
    await unfollow(d, follower, origin);
    if (target && !target.deactivated) {
      try {
        await follow(d, follower, target, {});
        moved++;
      } catch {
        // Blocked by the target (or following themselves): the follower just leaves the origin, as in Pleroma.
      }
    }
  }
  return moved;
}
