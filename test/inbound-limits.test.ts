/**
 * Inbound limits (issue 44, services/inbound-limits.ts): one hostile server replaying a flood of signed Creates,
 * each mentioning a local user (never "unsolicited" before), from one actor and from 20 actors of one host. The
 * database must stay within a stated bound (the statuses' stored bytes, and D1's own size), what is refused is a 429
 * with `Retry-After`, logged once per sender and hour, local users are answered normally throughout, a followed
 * actor's posts still arrive, and the admin `stats` lists the top senders. Each flood comes from a host of its own
 * (`createPeer(host)`): the counters are per host, and this file's database is shared by its tests.
 */
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import worker from "../src/index";
import { RETENTION_MINUTE } from "../src/cron";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { json, makeAdmin, registerUser, valid, type TestUser } from "./helpers";
import { A } from "./instances";
import { expectAccepted, fill, followPeer, q, reroute, unroute, type Setup } from "./inbound";
import { createPeer, type Peer } from "./peer";
import { AdminStatsSchema } from "../src/routes/admin/config";
import { StatusSchema } from "../src/schemas/status";
import {
  FLUSH_EVERY,
  LIMITS,
  MENTION_ALLOWANCE,
  PENDING_MAX,
  limitsClock,
  pending,
  refusalLog,
} from "../src/services/inbound-limits";
import mastodonCreate from "./fixtures/federation/mastodon-create-note.json";
import mastodonUpdate from "./fixtures/federation/mastodon-update-note.json";

/** The limits count by a clock held at the middle of an hour, so no test crosses into the next hour. */
const HOUR = 3_600_000;
const MID_HOUR = Math.floor(Date.now() / HOUR) * HOUR + HOUR / 2;
const realClock = limitsClock.now;
beforeEach(() => {
  limitsClock.now = () => MID_HOUR;
});
afterEach(() => {
  limitsClock.now = realClock;
  unroute();
});

let n = 0;
/** A fixture's placeholders for a post `id` by `actor` of `peer` addressed to `target`. */
const varsFor = (peer: Peer, actor: string, target: TestUser, id: string) => ({
  ACTOR: actor,
  ORIGIN: peer.origin,
  TARGET: `${A.origin}/users/${target.username}`,
  TARGET_NAME: target.username,
  NAME: new URL(actor).pathname.split("/").pop()!,
  N: id,
});

/** A Create by `actor` mentioning `target`, its content padded to about `size` bytes. */
function create(peer: Peer, actor: string, target: TestUser, size: number, mention = true) {
  const a = fill(mastodonCreate, varsFor(peer, actor, target, `${Date.now()}${n++}`));
  a.object.attachment = [];
  if (!mention) {
    for (const o of [a, a.object]) o.cc = [`${actor}/followers`];
    a.object.tag = [];
  }
  const pad = "flood ".repeat(Math.ceil(size / 6));
  a.object.content = a.object.contentMap.en = `${mention ? `<p>@${target.username}</p>` : ""}<p>${pad}</p>`;
  return a;
}

/** Everything `host`'s actors have stored here: statuses and their content's bytes. */
const storedFrom = async (host: string) =>
  (
    await q<{ n: number; bytes: number }>(
      "SELECT count(*) AS n, coalesce(sum(length(s.content)), 0) AS bytes FROM statuses s JOIN accounts a ON a.id = s.account_id WHERE a.domain = ?",
      host,
    )
  )[0]!;

/** D1's own figure for the database's size (what the storage guard measures). */
const dbSize = async () => Number((await env.DB.prepare("SELECT 1").run()).meta.size_after ?? 0);

/** Records the refusals logged while `fn` runs. */
async function logged(fn: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  const write = refusalLog.write;
  refusalLog.write = (line) => void lines.push(line);
  try {
    await fn();
  } finally {
    refusalLog.write = write;
  }
  return lines;
}
const refusalLines = (lines: string[], sender: string) =>
  lines.filter((l) => l.startsWith(`inbox: refusing what ${sender} `)).length;

/** A 429 whose Retry-After is the end of the hour (half an hour from the held clock). */
async function expectThrottled(res: Response) {
  expect(res.status).toBe(429);
  expect(res.headers.get("retry-after")).toBe(String(HOUR / 2 / 1000));
  expect(await res.json()).toEqual({ error: "Throttled" });
}

/** A local user reads and posts as usual. */
async function localUserAnswered(user: TestUser, i: number) {
  valid(
    StatusSchema,
    await json("/api/v1/statuses", { instance: A, token: user.token, body: { status: `still here ${i}` } }),
  );
  await json("/api/v1/accounts/verify_credentials", { instance: A, token: user.token });
}

describe("a flood of Creates from one server", () => {
  it("from one actor nobody follows: stored up to its allowance, then 429 with Retry-After, logged once", async () => {
    const peer = createPeer("flood-one.example");
    reroute(() => peer.route());
    const user = await registerUser({ instance: A });
    const actor = peer.actor();
    const before = await dbSize();
    const answers: number[] = [];
    const log = await logged(async () => {
      // The probe's shape: 40 Creates of ~92 KB, each mentioning the local user.
      for (let i = 0; i < 40; i++) {
        const res = await peer.send(actor, create(peer, actor, user, 92_000));
        answers.push(res.status);
        if (res.status === 429) await expectThrottled(res);
        else await expectAccepted(res);
        if (i % 10 === 0) await localUserAnswered(user, i);
      }
    });
    const accepted = answers.filter((s) => s === 202).length;
    // The stranger's hourly allowance (250 KB) holds two such posts; everything after is refused, not one accepted.
    expect(accepted).toBe(2);
    expect(answers.slice(accepted).every((s) => s === 429)).toBe(true);
    const stored = await storedFrom(peer.host);
    // The stated bound: the hour's byte allowance (a window holds at most its allowance plus one post, ≤ 1 MB, when
    // that post alone is larger; these are not).
    expect(stored.n).toBe(accepted);
    expect(stored.bytes).toBeLessThanOrEqual(LIMITS.stranger.hour.bytes);
    // D1's size: the stored posts (content and search text), not the 3.7 MB sent.
    const grown = (await dbSize()) - before;
    expect(before).toBeGreaterThan(0);
    expect(grown).toBeLessThan(1_000_000);
    expect(refusalLines(log, actor)).toBe(1);
    // The refusal is on the actor's row for this hour (the admin view's figure).
    const [row] = await q<{ refused_hours: number; statuses: number }>(
      "SELECT refused_hours, statuses FROM inbound_usage WHERE sender = ?",
      actor,
    );
    expect(row).toEqual({ refused_hours: 1, statuses: 2 });
  });

  it("from 20 actors of one host: the host's allowance for unfollowed actors holds; a followed actor still gets through", async () => {
    const peer = createPeer("flood-many.example");
    reroute(() => peer.route());
    const user = await registerUser({ instance: A });
    // An actor of the same host that the local user follows (Follow, Accept through the inbox).
    const friend = peer.actor();
    const s: Setup = {
      peer,
      user,
      actor: friend,
      target: `${A.origin}/users/${user.username}`,
      vars: varsFor(peer, friend, user, `${Date.now()}f`),
    };
    await followPeer(s);
    const actors = Array.from({ length: 20 }, () => peer.actor());
    let accepted = 0;
    let refused = 0;
    const log = await logged(async () => {
      for (let round = 0; round < 2; round++)
        for (const actor of actors) {
          const res = await peer.send(actor, create(peer, actor, user, 40_000));
          if (res.status === 429) {
            await expectThrottled(res);
            refused++;
          } else {
            await expectAccepted(res);
            accepted++;
          }
        }
      // The host's unfollowed actors have spent their allowance; the followed one is not held by it.
      const res = await peer.send(friend, create(peer, friend, user, 2_000, false));
      await expectAccepted(res);
      await localUserAnswered(user, 0);
    });
    // 40 posts of 40 KB (1.6 MB): the host's hourly allowance for unfollowed actors (750 KB) holds 18 of them.
    expect(accepted).toBe(Math.floor(LIMITS.hostStrangers.hour.bytes / 41_000));
    expect(refused).toBe(40 - accepted);
    const stored = await storedFrom(peer.host);
    expect(stored.n).toBe(accepted + 1);
    expect(stored.bytes).toBeLessThanOrEqual(LIMITS.hostStrangers.hour.bytes + 10_000);
    const friendPosts = await q(
      "SELECT s.id FROM statuses s JOIN accounts a ON a.id = s.account_id WHERE a.uri = ?",
      friend,
    );
    expect(friendPosts).toHaveLength(1);
    // Refused for the host's allowance: logged once for the host, not once per actor or activity.
    expect(refusalLines(log, peer.host)).toBe(1);
    for (const a of actors) expect(refusalLines(log, a)).toBe(0);

    // The admin view lists the host and its actors, the biggest first.
    const admin = await registerUser({ instance: A, scopes: "read write follow admin" });
    await makeAdmin(admin.id);
    const stats = valid(
      AdminStatsSchema,
      await json("/api/v1/pleroma/admin/stats", { instance: A, token: admin.token }),
    );
    const host = stats.inbound_senders.hosts.find((h) => h.host === peer.host);
    expect(host).toMatchObject({ statuses: accepted + 1, unfollowed_statuses: accepted, refused_hours: 1 });
    expect(host!.bytes).toBeGreaterThan(host!.unfollowed_bytes);
    const bytes = stats.inbound_senders.hosts.map((h) => h.bytes);
    expect(bytes).toEqual([...bytes].sort((x, y) => y - x));
    const listed = stats.inbound_senders.actors.filter((a) => a.uri.startsWith(peer.origin));
    expect(listed.length).toBeGreaterThan(0);
    expect(listed[0]!.acct).toMatch(/@flood-many\.example$/);
    expect(listed[0]!.account_id).toBeTruthy();
    expect(stats.inbound_senders.day).toBe(new Date(MID_HOUR).toISOString().slice(0, 10));
    // Not for a user without the admin privilege.
    await json("/api/v1/pleroma/admin/stats", { instance: A, token: user.token, status: 403 });
  }, 120_000);

  it("a stranger's mentions beyond the allowance are unsolicited: refused when the database is nearly full", async () => {
    const peer = createPeer("flood-mentions.example");
    reroute(() => peer.route());
    const user = await registerUser({ instance: A });
    const actor = peer.actor();
    // The storage guard's figure, past its 95% (services/storage.ts), kept in `instance_keys`.
    await q(
      "INSERT INTO instance_keys (name, value, created_at) VALUES ('storage', ?, 0) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
      JSON.stringify({ bytes: 99, limitBytes: 100, at: Date.now(), warnedAt: Date.now() }),
    );
    try {
      for (let i = 0; i < MENTION_ALLOWANCE.hour + 3; i++)
        await expectAccepted(await peer.send(actor, create(peer, actor, user, 200)));
    } finally {
      await q("DELETE FROM instance_keys WHERE name = 'storage'");
    }
    // Within the allowance a mention is solicited and stored; beyond it, dropped (acknowledged: no retry helps).
    expect((await storedFrom(peer.host)).n).toBe(MENTION_ALLOWANCE.hour);
    const notifications = await json("/api/v1/notifications?types[]=mention", { instance: A, token: user.token });
    expect(notifications).toHaveLength(MENTION_ALLOWANCE.hour);
  });

  it("a full table of unwritten counts drops its oldest sender's, not everyone's (made-up actors wipe nothing else)", async () => {
    const peer = createPeer("many-actors.example");
    reroute(() => peer.route());
    const user = await registerUser({ instance: A });
    pending.clear();
    for (let i = 0; pending.size < PENDING_MAX - 2; i++) pending.set(`https://made-up.example/users/${i}`, {} as never);
    const actor = peer.actor();
    await expectAccepted(await peer.send(actor, create(peer, actor, user, 100)));
    expect(pending.size).toBe(PENDING_MAX);
    const other = peer.actor();
    await expectAccepted(await peer.send(other, create(peer, other, user, 100)));
    expect(pending.size).toBe(PENDING_MAX);
    expect(pending.has("https://made-up.example/users/0")).toBe(false);
    expect(pending.get(actor)?.statuses).toBe(1);
    pending.clear();
  });

  it("counts are written every FLUSH_EVERY posts of a sender; what is not written yet still counts", async () => {
    const peer = createPeer("flood-counted.example");
    reroute(() => peer.route());
    const user = await registerUser({ instance: A });
    const actor = peer.actor();
    const rows = () =>
      q<{ sender: string; statuses: number; hour_statuses: number }>(
        "SELECT sender, statuses, hour_statuses FROM inbound_usage WHERE sender IN (?, ?) ORDER BY sender",
        actor,
        peer.host,
      );
    // A stranger mentioning a local user (stored: it concerns someone here), 20 posts an hour.
    for (let i = 0; i < 6; i++) await expectAccepted(await peer.send(actor, create(peer, actor, user, 100)));
    // Six posts stored, none written yet: the isolate holds them.
    expect(await rows()).toEqual([]);
    expect(pending.get(actor)?.statuses).toBe(6);
    for (let i = 6; i < FLUSH_EVERY; i++) await expectAccepted(await peer.send(actor, create(peer, actor, user, 100)));
    // The tenth writes both rows, in its own batch, and the isolate forgets them.
    expect(await rows()).toEqual([
      { sender: peer.host, statuses: FLUSH_EVERY, hour_statuses: FLUSH_EVERY },
      { sender: actor, statuses: FLUSH_EVERY, hour_statuses: FLUSH_EVERY },
    ]);
    expect(pending.has(actor)).toBe(false);
    // What is counted but not written still counts against the allowance: the stranger's 20 posts an hour hold
    // at 20 (10 written, 10 pending), and the refusal writes the pending ten.
    const answers: number[] = [];
    for (let i = FLUSH_EVERY; i < LIMITS.stranger.hour.statuses + 2; i++)
      answers.push((await peer.send(actor, create(peer, actor, user, 100))).status);
    expect(answers).toEqual([...Array(LIMITS.stranger.hour.statuses - FLUSH_EVERY).fill(202), 429, 429]);
    expect((await rows())[1]).toEqual({
      sender: actor,
      statuses: LIMITS.stranger.hour.statuses,
      hour_statuses: LIMITS.stranger.hour.statuses,
    });
    expect((await storedFrom(peer.host)).n).toBe(LIMITS.stranger.hour.statuses);
  });

  it("edits count as posts: a stranger's Updates beyond its allowance are refused with 429", async () => {
    const peer = createPeer("flood-edits.example");
    reroute(() => peer.route());
    const user = await registerUser({ instance: A });
    const actor = peer.actor();
    const post = create(peer, actor, user, 1_000);
    await expectAccepted(await peer.send(actor, post));
    const edit = (i: number) =>
      fill(mastodonUpdate, {
        ...varsFor(peer, actor, user, post.object.id.split("/").pop()),
        EDIT: String(i),
        UPDATED: new Date(Date.now() - 60_000 + i * 1000).toISOString(),
        CONTENT: `${i} ${"edit ".repeat(6_000)}`,
      });
    const answers: number[] = [];
    const log = await logged(async () => {
      for (let i = 0; i < 12; i++) {
        const res = await peer.send(actor, edit(i));
        answers.push(res.status);
        if (res.status === 429) await expectThrottled(res);
        else await expectAccepted(res);
      }
    });
    // A post of ~1 KB, then edits of ~30 KB: eight fit in the stranger's 250 KB of the hour, the rest are refused.
    expect(answers).toEqual([...Array(8).fill(202), ...Array(4).fill(429)]);
    expect(refusalLines(log, actor)).toBe(1);
    const [row] = await q<{ statuses: number }>("SELECT statuses FROM inbound_usage WHERE sender = ?", actor);
    expect(row!.statuses).toBe(9);
  });

  it("past days' counters go with the cron's hourly clean-up; other minutes and today's rows are left alone", async () => {
    const day = Math.floor(MID_HOUR / 86_400_000);
    await q(
      "INSERT INTO inbound_usage (day, sender, statuses, bytes) VALUES (?, 'old.example', 1, 1), (?, 'new.example', 1, 1)",
      day - 1,
      day,
    );
    const runCron = async (at: number) => {
      const ctx = createExecutionContext();
      await worker.scheduled(
        createScheduledController({ scheduledTime: new Date(at), cron: "* * * * *" }),
        env as never,
        ctx,
      );
      await waitOnExecutionContext(ctx);
    };
    const hourStart = MID_HOUR - HOUR / 2;
    const senders = async () =>
      (
        await q<{ sender: string }>(
          "SELECT sender FROM inbound_usage WHERE sender IN ('old.example', 'new.example') ORDER BY sender",
        )
      ).map((r) => r.sender);
    await runCron(hourStart + (RETENTION_MINUTE + 1) * 60_000);
    expect(await senders()).toEqual(["new.example", "old.example"]);
    await runCron(hourStart + RETENTION_MINUTE * 60_000);
    expect(await senders()).toEqual(["new.example"]);
  });
});
