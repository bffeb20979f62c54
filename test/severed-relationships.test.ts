/**
 * Mastodon 4.3's severed relationships (issue 48), through HTTP: a suspension (Mastodon's admin API, an import,
 * admin-fe's MRF page) and a user's own domain block each leave the local users who lost follows a
 * `severed_relationships` notification naming the event, the event list and the CSV of what was lost; one event
 * row and one row per user, not per follow; v1 shows the type only to clients that ask for it.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { call, json, makeAdmin, registerUser, remoteAccount, valid, type TestUser } from "./helpers";
import { q } from "./inbound";
import { newId } from "../src/db/ids";
import { NotificationSchema, RelationshipSeveranceEventSchema } from "../src/schemas/social";
import { GroupedNotificationsResultsSchema } from "../src/schemas/notification-groups";

async function admin(): Promise<TestUser> {
  const u = await registerUser({ scopes: "read write follow push admin" });
  await makeAdmin(u.id);
  return u;
}

/** A second remote account on `domain`. */
async function remoteOn(domain: string, username: string): Promise<string> {
  const id = newId();
  const t = Date.now();
  await env.DB.prepare(
    "INSERT INTO accounts (id, username, domain, uri, url, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
  )
    .bind(id, username, domain, `https://${domain}/users/${username}`, `https://${domain}/@${username}`, t, t)
    .run();
  return id;
}

const follow = (from: string, to: string, opts: { reblogs?: boolean; notify?: boolean } = {}) =>
  env.DB.prepare(
    "INSERT INTO follows (id, account_id, target_account_id, created_at, uri, show_reblogs, notify) VALUES (?, ?, ?, ?, ?, ?, ?)",
  ).bind(newId(), from, to, Date.now(), `https://x/${newId()}`, opts.reblogs === false ? 0 : 1, opts.notify ? 1 : 0);

const suspend = (a: TestUser, domain: string) =>
  json("/api/v1/admin/domain_blocks", { method: "POST", token: a.token, body: { domain, severity: "suspend" } });

const events = async (u: TestUser) =>
  valid(z.array(RelationshipSeveranceEventSchema), await json("/api/v1/severed_relationships", { token: u.token }));

async function csv(u: TestUser, id: string, which: string, status = 200) {
  const res = await call(`/severed_relationships/${id}/${which}.csv`, { token: u.token });
  expect(res.status).toBe(status);
  return { text: await res.text(), res };
}

describe("severed relationships", () => {
  it("a suspension notifies each local user who lost follows, once, with the event and the CSV of what was lost", async () => {
    const [a, one, two, bystander] = await Promise.all([admin(), registerUser(), registerUser(), registerUser()]);
    const far = await remoteAccount();
    const far2 = await remoteOn(far.domain, "far2");
    const elsewhere = await remoteAccount();
    await env.DB.batch([
      follow(one.id, far.id),
      follow(one.id, far2),
      follow(far.id, one.id),
      follow(two.id, far.id, { reblogs: false, notify: true }),
      follow(bystander.id, elsewhere.id),
      follow(one.id, elsewhere.id),
    ]);
    const before = Date.now();
    await suspend(a, far.domain);

    // One event, one row per user who lost something (not one per follow).
    expect(
      await q("SELECT type, target_name FROM relationship_severance_events WHERE target_name = ?", far.domain),
    ).toEqual([{ type: "domain_block", target_name: far.domain }]);
    expect(
      await q(
        "SELECT count(*) AS n FROM severed_relationships s JOIN relationship_severance_events e ON e.id = s.event_id WHERE e.target_name = ?",
        far.domain,
      ),
    ).toEqual([{ n: 2 }]);

    const [mine] = await events(one);
    expect(mine).toMatchObject({
      type: "domain_block",
      target_name: far.domain,
      purged: false,
      followers_count: 1,
      following_count: 2,
    });
    expect(Date.parse(mine.created_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(await events(two)).toMatchObject([{ followers_count: 0, following_count: 1 }]);
    expect(await events(bystander)).toEqual([]);

    // The notification: on v2 (Mastodon 4.3's clients) unasked, with its event.
    const grouped = valid(GroupedNotificationsResultsSchema, await json("/api/v2/notifications", { token: one.token }));
    const group = grouped.notification_groups.find((g) => g.type === "severed_relationships");
    expect(group?.event).toEqual(mine);
    expect(group?.sample_account_ids).toEqual([one.id]);
    // On v1 only when asked for (a client older than the type must not meet it), then whole.
    const plain = z.array(NotificationSchema).parse(await json("/api/v1/notifications", { token: one.token }));
    expect(plain.map((n) => n.type)).not.toContain("severed_relationships");
    const asked = valid(
      z.array(NotificationSchema),
      await json("/api/v1/notifications?types[]=severed_relationships", { token: one.token }),
    );
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ type: "severed_relationships", event: mine, account: { id: one.id } });
    expect(
      valid(NotificationSchema, await json(`/api/v1/notifications/${asked[0]!.id}`, { token: one.token })).event,
    ).toEqual(mine);
    // Neither pushed nor streamed.
    expect(
      await q("SELECT pushed FROM notifications WHERE type = 'severed_relationships' AND account_id = ?", one.id),
    ).toEqual([{ pushed: 1 }]);
    const unasked = await json("/api/v2/notifications?types[]=mention", { token: one.token });
    expect(unasked.notification_groups).toEqual([]);

    // The CSV of what was lost, as Mastodon's (its follows import reads `following`).
    const following = await csv(one, mine.id, "following");
    expect(following.res.headers.get("content-type")).toMatch(/^text\/csv/);
    expect(following.res.headers.get("content-disposition")).toContain(`following-${far.domain}-`);
    expect(following.text.trimEnd().split("\r\n").sort()).toEqual(
      [
        "Account address,Show boosts,Notify on new posts,Languages",
        `far@${far.domain},true,false,`,
        `far2@${far.domain},true,false,`,
      ].sort(),
    );
    expect((await csv(one, mine.id, "followers")).text).toBe(`Account address\r\nfar@${far.domain}\r\n`);
    const [theirs] = await events(two);
    expect((await csv(two, theirs!.id, "following")).text).toBe(
      `Account address,Show boosts,Notify on new posts,Languages\r\nfar@${far.domain},false,true,\r\n`,
    );
    // Another user's event is not found; no token, no CSV.
    expect((await csv(bystander, mine.id, "following", 404)).text).toContain("error");
    expect((await call(`/severed_relationships/${mine.id}/following.csv`)).status).toBe(403);

    // Suspending again severs nothing and notifies nobody.
    await json(`/api/v1/admin/domain_blocks/${far.domain}`, {
      method: "PUT",
      token: a.token,
      body: { severity: "suspend", reject_media: true },
    });
    expect(await events(one)).toHaveLength(1);
    expect(await q("SELECT count(*) AS n FROM follows WHERE account_id = ?", one.id)).toEqual([{ n: 1 }]);
  });

  it("an import suspending several domains writes an event per domain that severed something", async () => {
    const [a, u] = await Promise.all([admin(), registerUser()]);
    const [x, y, idle] = await Promise.all([remoteAccount(), remoteAccount(), remoteAccount()]);
    await env.DB.batch([follow(u.id, x.id), follow(y.id, u.id)]);
    await json("/api/v1/pleroma/admin/domain_blocks/import", {
      method: "POST",
      token: a.token,
      body: { list: `${x.domain}\n${y.domain}\n${idle.domain}\n`, format: "plain", apply: true },
    });
    const got = await events(u);
    expect(got.map((e) => [e.target_name, e.following_count, e.followers_count]).sort()).toEqual(
      [
        [x.domain, 1, 0],
        [y.domain, 0, 1],
      ].sort(),
    );
    expect(
      await q("SELECT count(*) AS n FROM relationship_severance_events WHERE target_name = ?", idle.domain),
    ).toEqual([{ n: 0 }]);
  });

  it("a rejection on admin-fe's MRF page severs and notifies as a suspension does", async () => {
    const [a, u] = await Promise.all([admin(), registerUser()]);
    const far = await remoteAccount();
    await follow(u.id, far.id).run();
    await json("/api/v1/pleroma/admin/config", {
      method: "POST",
      token: a.token,
      body: {
        configs: [
          { group: ":pleroma", key: ":mrf_simple", value: [{ tuple: [":reject", [{ tuple: [far.domain, "spam"] }]] }] },
        ],
      },
    });
    expect(await q("SELECT count(*) AS n FROM follows WHERE account_id = ?", u.id)).toEqual([{ n: 0 }]);
    expect(await events(u)).toMatchObject([{ type: "domain_block", target_name: far.domain, following_count: 1 }]);
  });

  it("a user's own domain block tells them of the followers and follows it removed, and touches nobody else", async () => {
    const [me, other] = await Promise.all([registerUser(), registerUser()]);
    const far = await remoteAccount();
    await env.DB.batch([follow(far.id, me.id), follow(me.id, far.id), follow(far.id, other.id)]);
    await json("/api/v1/domain_blocks", { method: "POST", token: me.token, body: { domain: far.domain } });
    const [e] = await events(me);
    expect(e).toMatchObject({
      type: "user_domain_block",
      target_name: far.domain,
      followers_count: 1,
      following_count: 1,
    });
    expect((await csv(me, e!.id, "followers")).text).toBe(`Account address\r\nfar@${far.domain}\r\n`);
    // The user's own follow ends too (Mastodon's AfterBlockDomainFromAccountService).
    expect((await csv(me, e!.id, "following")).text).toBe(
      `Account address,Show boosts,Notify on new posts,Languages\r\nfar@${far.domain},true,false,\r\n`,
    );
    expect(await q("SELECT count(*) AS n FROM follows WHERE account_id = ?", me.id)).toEqual([{ n: 0 }]);
    expect(await events(other)).toEqual([]);
    expect(await q("SELECT count(*) AS n FROM follows WHERE target_account_id = ?", other.id)).toEqual([{ n: 1 }]);
    // Blocking it again (nothing left to sever) notifies nothing more.
    await json("/api/v1/domain_blocks", { method: "POST", token: me.token, body: { domain: far.domain } });
    expect(await events(me)).toHaveLength(1);
  });
});
