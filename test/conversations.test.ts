import { describe, expect, it } from "vitest";
import { ConversationSchema } from "../src/schemas/social";
import { call, json, post, registerUser, type TestUser, valid } from "./helpers";

const convs = async (u: TestUser, query = "") =>
  (await json(`/api/v1/conversations${query}`, { token: u.token })).map((c: unknown) => valid(ConversationSchema, c));

describe("conversations", () => {
  it("are made by direct statuses, track unread and the last status, and can be left", async () => {
    const [a, b, c] = [await registerUser(), await registerUser(), await registerUser()];
    const dm = await post(a, { status: `hi @${b.username}`, visibility: "direct" });
    const [forA] = await convs(a);
    const [forB] = await convs(b);
    expect(await convs(c)).toEqual([]);
    expect(forA).toMatchObject({ id: dm.pleroma.direct_conversation_id, unread: false, last_status: { id: dm.id } });
    expect(forA.accounts.map((x: any) => x.id)).toEqual([b.id]);
    expect(forA.pleroma.recipients.map((x: any) => x.id)).toEqual([a.id, b.id]);
    expect(forB).toMatchObject({ unread: true, last_status: { id: dm.id } });
    expect(
      (await json("/api/v1/accounts/verify_credentials", { token: b.token })).pleroma.unread_conversation_count,
    ).toBe(1);

    const reply = await post(b, { status: "hello back", in_reply_to_id: dm.id });
    expect((await convs(a))[0]).toMatchObject({ unread: true, last_status: { id: reply.id } });
    expect((await json(`/api/v1/conversations/${forB.id}/read`, { method: "POST", token: b.token })).unread).toBe(
      false,
    );
    expect(
      (await json("/api/v1/accounts/verify_credentials", { token: b.token })).pleroma.unread_conversation_count,
    ).toBe(0);

    const statuses = await json(`/api/v1/pleroma/conversations/${forA.id}/statuses`, { token: a.token });
    expect(statuses.map((s: any) => s.id)).toEqual([reply.id, dm.id]);
    expect((await json(`/api/v1/pleroma/conversations/${forA.id}`, { token: a.token })).id).toBe(forA.id);

    // Someone else's conversation does not exist for you.
    await json(`/api/v1/pleroma/conversations/${forA.id}`, { token: c.token, status: 404 });
    await json(`/api/v1/pleroma/conversations/${forA.id}/statuses`, { token: c.token, status: 404 });
    await json(`/api/v1/conversations/${forA.id}/read`, { method: "POST", token: c.token, status: 404 });
    await json(`/api/v1/conversations/${forA.id}`, { method: "DELETE", token: c.token, status: 404 });

    expect(await json(`/api/v1/conversations/${forA.id}`, { method: "DELETE", token: a.token })).toEqual({});
    expect(await convs(a)).toEqual([]);
    expect((await convs(b)).length).toBe(1);
  });

  it("recipients change only when the owner changes them, and filter the list", async () => {
    const [a, b, c] = [await registerUser(), await registerUser(), await registerUser()];
    const dm = await post(a, { status: `hi @${b.username}`, visibility: "direct" });
    const id = dm.pleroma.direct_conversation_id;
    const changed = await json(`/api/v1/pleroma/conversations/${id}`, {
      method: "PATCH",
      token: a.token,
      body: { recipients: [b.id, c.id] },
    });
    expect(changed.pleroma.recipients.map((x: any) => x.id)).toEqual([a.id, b.id, c.id]);
    const widened = await post(a, { status: "now with c", in_reply_to_conversation_id: id });
    await json(`/api/v1/statuses/${widened.id}`, { token: c.token });
    expect((await convs(a, `?recipients[]=${c.id}`)).map((x: any) => x.id)).toEqual([id]);
    expect(await convs(a, `?recipients[]=${a.id}&recipients[]=01ARZ3NDEKTSV4RRFFQ69G5FAV`)).toEqual([]);
    const other = await post(a, { status: `another @${c.username}`, visibility: "direct" });
    const all = await json("/api/v1/pleroma/conversations/read", { method: "POST", token: c.token });
    expect(all.map((x: any) => x.last_status.id).sort()).toEqual([other.id, widened.id].sort());
    expect((await convs(c)).every((x: any) => !x.unread)).toBe(true);
  });
});

describe("conversations paged as every list (issue 30: one paginator)", () => {
  it("min_id answers the conversations right after it, oldest first in newest-first order; prev links walk them all", async () => {
    const me = await registerUser();
    const others = [await registerUser(), await registerUser(), await registerUser(), await registerUser()];
    for (const o of others) await post(me, { status: `hi @${o.username}`, visibility: "direct" });
    const all = await convs(me);
    expect(all).toHaveLength(4);
    const lastIds = all.map((c: any) => c.last_status.id);
    // Right after the oldest: the second oldest, not the newest.
    const res = await call(`/api/v1/conversations?min_id=${lastIds[3]}&limit=1`, { token: me.token });
    const [next] = ((await res.json()) as unknown[]).map((c) => valid(ConversationSchema, c));
    expect(next!.id).toBe(all[2].id);
    // Following `prev` from the oldest reaches every newer conversation once, in order.
    const seen = [all[3].id, next!.id];
    let link = res.headers.get("link");
    for (let i = 0; i < 5 && link?.includes('rel="prev"'); i++) {
      const prev = /<([^>]+)>; rel="prev"/.exec(link)![1]!.replace(/^https?:\/\/[^/]+/, "");
      const r = await call(prev, { token: me.token });
      const page = (await r.json()) as any[];
      if (page.length === 0) break;
      seen.push(...page.map((c) => c.id).reverse());
      link = r.headers.get("link");
    }
    expect(seen).toEqual([...all].reverse().map((c: any) => c.id));
    // since_id keeps newest-first from the top.
    expect((await convs(me, `?since_id=${lastIds[2]}&limit=1`)).map((c: any) => c.id)).toEqual([all[0].id]);
  });
});
