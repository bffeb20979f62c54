/**
 * Account aliases and moves (Pleroma's `aliases` and `move_account`, ActivityPub `Move`).
 *
 * Aliases are the account's `alsoKnownAs`: actor ids of its other accounts. A move from origin to target is
 * allowed only when the target lists the origin among its aliases. It is recorded on the origin
 * (`moved_to_account_id`, shown as `moved`), its local followers get a `move` notification in the same batch
 * (and, for a local origin, a `Move` goes to its remote followers through the outbox). Local followers who allow
 * it (`allow_following_move`) then move to the target at once, after the answer (the `moves` effect:
 * `moveFollowersOf`), as Mastodon's MoveWorker and Pleroma's `move_following` do: their follow of the origin
 * ends, a follow (or request) of the target starts. The batch also writes a `pending_moves` row, which that pass
 * deletes when done; a pass that failed (or left followers over) leaves it, and the cron retries it
 * (`moveFollowers`), so nothing is polled while nothing failed. An incoming `Move` is handled the same way once
 * the target, refetched, lists the origin.
 */
import { mergeEffects, type Effects } from "./effects";
import { eq, sql } from "drizzle-orm";
import type { Env } from "../env";
import { db, now, statement, type DB } from "../db/client";
import { withUser, type AccountRow, type AccountWithUser } from "./accounts";
import { accounts } from "../db/schema";
import { ApiError } from "../lib/errors";
import { follow, unfollow } from "./graph";
import { notify } from "./notifications";
import { outboxWrite } from "./outbox";
import { profileUpdateWrites } from "./profile-updates";

/** Pleroma's answer when the target does not list the origin. */
export const NOT_ALIASED = "Target account must have the origin in `alsoKnownAs`";
/** Aliases an account may list (actor documents carry them all). */
const MAX_ALIASES = 16;
/** Followers moved per pass (each is a few round trips); more are left to the cron's next run. */
const MOVES_PER_PASS = 50;
/** When the cron retries a move whose pass has not finished (first after this, then twice as long each time). */
const RETRY_AFTER_MS = 5 * 60_000;
/** Attempts after which a move that keeps failing is given up (the last about a day after the move). */
const MAX_ATTEMPTS = 8;
/** Pending moves retried per cron run. */
const RETRIES_PER_RUN = 5;

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
  return { error: null, effects: {} };
}

/** Removes `alias`; null when it was not an alias. */
export async function removeAlias(d: DB, account: AccountRow, alias: AccountRow, t: number): Promise<Effects | null> {
  if (!account.alsoKnownAs.includes(alias.uri)) return null;
  await setAliases(
    d,
    account,
    account.alsoKnownAs.filter((u) => u !== alias.uri),
    t,
  );
  return {};
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
  const local = origin.domain === null;
  await d.$client.batch([
    statement(
      d,
      sql`UPDATE accounts SET moved_to_account_id = ${target.id}, updated_at = ${t} WHERE id = ${origin.id}`,
    ),
    notify(d, { type: "move", to: followers.map((f) => f.id), from: origin.id, targetAccountId: target.id }),
    ...(local ? [outboxWrite(d, origin.id, { type: "Move", targetId: target.id }, t)] : []),
    // Due for the cron only once the pass after this answer has had its time (it deletes the row when done).
    ...(followers.length
      ? [
          statement(
            d,
            sql`INSERT INTO pending_moves (origin_id, next_at, created_at) VALUES (${origin.id}, ${t + RETRY_AFTER_MS}, ${t})
              ON CONFLICT (origin_id) DO UPDATE SET next_at = excluded.next_at, attempts = 0`,
          ),
        ]
      : []),
  ]);
  // Local followers are notified, and move now; a local origin's Move goes to its followers' servers.
  return {
    error: null,
    effects: { push: true, ...(followers.length ? { moves: [origin.id] } : {}) },
  };
}

/** The account an account moved to, for its `moved` field (null when it has not moved or the target is gone). */
export async function movedTarget(d: DB, account: AccountRow): Promise<AccountWithUser | null> {
  if (!account.movedToAccountId) return null;
  const found = (await withUser(d).where(eq(accounts.id, account.movedToAccountId)).get()) ?? null;
  return found && !found.account.deactivated ? found : null;
}

/**
 * One pass over a moved account's local followers who allow it (up to `max`): each one's follow of the origin
 * ends, then a follow of the target starts (refused, e.g. blocked by the target: the follower just leaves the
 * origin, as in Pleroma). The `pending_moves` row goes when none is left; with more left it is due again at once
 * (the cron's next run goes on). A failure throws and leaves the row for the cron. Answers how many followers
 * moved and what their follows say must follow them.
 */
export async function moveFollowersOf(
  d: DB,
  originId: string,
  t: number = now(),
  max = MOVES_PER_PASS,
): Promise<{ moved: number; effects: Effects }> {
  const done = () => d.run(sql`DELETE FROM pending_moves WHERE origin_id = ${originId}`);
  const origin = await d.select().from(accounts).where(eq(accounts.id, originId)).get();
  if (!origin?.movedToAccountId) {
    await done();
    return { moved: 0, effects: {} };
  }
  const rows = await d.all<{ id: string }>(
    sql`SELECT f.account_id AS id FROM follows f
      JOIN users u ON u.account_id = f.account_id AND u.allow_following_move = 1
      JOIN accounts fa ON fa.id = f.account_id AND fa.deactivated = 0
      WHERE f.target_account_id = ${originId} AND f.account_id <> ${origin.movedToAccountId}
      LIMIT ${max + 1}`,
  );
  const ids = [origin.movedToAccountId, ...rows.slice(0, max).map((r) => r.id)];
  const found = await d
    .select()
    .from(accounts)
    .where(sql`${accounts.id} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`);
  const byId = new Map(found.map((a) => [a.id, a]));
  const target = byId.get(origin.movedToAccountId);
  const effects: Effects[] = [];
  let moved = 0;
  for (const r of rows.slice(0, max)) {
    const follower = byId.get(r.id);
    if (!follower) continue;
    effects.push((await unfollow(d, follower, origin)).effects);
    if (!target || target.deactivated) continue;
    try {
      effects.push((await follow(d, follower, target, {})).effects);
      moved++;
    } catch (e) {
      // Refused (blocked by the target): not retried. Anything else (the database) is, by the cron.
      if (!(e instanceof ApiError)) throw e;
    }
  }
  if (rows.length > max)
    await d.run(sql`UPDATE pending_moves SET next_at = ${t}, attempts = 0 WHERE origin_id = ${originId}`);
  else await done();
  return { moved, effects: mergeEffects(...effects) };
}

/**
 * The cron job: retries the moves whose pass failed or left followers over (`pending_moves` due, an empty index
 * when nothing failed), each attempt pushing the next one back, a move that keeps failing given up after
 * MAX_ATTEMPTS. What the follows say must follow them goes to `after`. Answers how many followers moved; throws
 * (after trying every due move) when a pass failed, so the job's heartbeat shows it.
 */
export async function moveFollowers(
  env: Env,
  t: number = now(),
  after: (e: Effects) => void = () => {},
): Promise<number> {
  const d = db(env);
  const due = await d.all<{ origin_id: string; attempts: number }>(
    sql`SELECT origin_id, attempts FROM pending_moves WHERE next_at <= ${t} ORDER BY next_at LIMIT ${RETRIES_PER_RUN}`,
  );
  let moved = 0;
  let failure: unknown = null;
  for (const { origin_id: id, attempts } of due) {
    if (attempts >= MAX_ATTEMPTS) {
      console.error(`move of ${id}: given up after ${attempts} attempts`);
      await d.run(sql`DELETE FROM pending_moves WHERE origin_id = ${id}`);
      continue;
    }
    await d.run(
      sql`UPDATE pending_moves SET attempts = attempts + 1, next_at = ${t + RETRY_AFTER_MS * 2 ** attempts} WHERE origin_id = ${id}`,
    );
    try {
      const pass = await moveFollowersOf(d, id, t);
      moved += pass.moved;
      after(pass.effects);
    } catch (e) {
      failure ??= e;
    }
  }
  if (failure) throw failure;
  return moved;
}
