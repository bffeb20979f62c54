/**
 * The one `silenced()` fragment keeps each caller's rule (issue 13): which blocks count (the viewer's, or either
 * way), which mutes (any, only those hiding notifications, none; never an expired one), and domain blocks.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newId } from "../src/db/ids";
import { AccountSchema } from "../src/schemas/account";
import { NotificationSchema } from "../src/schemas/social";
import { EmojiReactionAccountsSchema } from "../src/schemas/status";
import { json, post, registerUser, remoteAccount, valid, type TestUser } from "./helpers";

const act = (u: TestUser, path: string, body?: Record<string, unknown>, method = "POST") =>
  json(path, { method, token: u.token, body });
const senders = async (u: TestUser, query = "") =>
  (await json(`/api/v1/notifications${query}`, { token: u.token }))
    .map((n: unknown) => valid(NotificationSchema, n))
    .map((n: any) => [n.account.id, n.pleroma.is_muted]);
const expireMute = (from: TestUser, to: TestUser) =>
  env.DB.prepare("UPDATE mutes SET expires_at = ? WHERE account_id = ? AND target_account_id = ?")
    .bind(Date.now() - 1000, from.id, to.id)
    .run();

describe("silenced accounts, per caller", () => {
  it("notifications: an expired mute neither suppresses nor hides, and is not shown as muted", async () => {
    const [me, once] = [await registerUser(), await registerUser()];
    const s = await post(me, { status: "mute me not" });
    await act(me, `/api/v1/accounts/${once.id}/mute`, { notifications: true, expires_in: 3600 });
    await act(once, `/api/v1/statuses/${s.id}/favourite`);
    expect(await senders(me, "?with_muted=true")).toEqual([]); // suppressed while the mute holds
    await act(once, `/api/v1/statuses/${s.id}/unfavourite`);
    await expireMute(me, once);
    await act(once, `/api/v1/statuses/${s.id}/favourite`);
    expect(await senders(me)).toEqual([[once.id, false]]);
  });

  it("notifications: a block either way made later hides earlier notifications, even with_muted", async () => {
    const [me, blocker, blocked] = [await registerUser(), await registerUser(), await registerUser()];
    const s = await post(me, { status: "both ways" });
    for (const u of [blocker, blocked]) await act(u, `/api/v1/statuses/${s.id}/favourite`);
    expect((await senders(me)).map((x: any) => x[0]).sort()).toEqual([blocker.id, blocked.id].sort());
    await act(blocker, `/api/v1/accounts/${me.id}/block`);
    await act(me, `/api/v1/accounts/${blocked.id}/block`);
    expect(await senders(me, "?with_muted=true")).toEqual([]);
  });

  it("account search: blocks either way hide an account, mutes do not", async () => {
    const me = await registerUser();
    const stem = `silent${Date.now().toString(36)}`;
    const [muted, blocked, blocker] = [
      await registerUser({ username: `${stem}a` }),
      await registerUser({ username: `${stem}b` }),
      await registerUser({ username: `${stem}c` }),
    ];
    await act(me, `/api/v1/accounts/${muted.id}/mute`);
    await act(me, `/api/v1/accounts/${blocked.id}/block`);
    await act(blocker, `/api/v1/accounts/${me.id}/block`);
    const found = await json(`/api/v1/accounts/search?q=${stem}`, { token: me.token });
    found.forEach((a: unknown) => valid(AccountSchema, a));
    expect(found.map((a: any) => a.id)).toEqual([muted.id]);
    // Someone else finds all three.
    const other = await registerUser();
    expect(
      (await json(`/api/v1/accounts/search?q=${stem}`, { token: other.token })).map((a: any) => a.id).sort(),
    ).toEqual([muted.id, blocked.id, blocker.id].sort());
  });

  it("reactions: reactors the viewer blocks, or on a domain they block, are left out; an expired mute counts for nothing", async () => {
    const [author, viewer, blocked, muted] = [
      await registerUser(),
      await registerUser(),
      await registerUser(),
      await registerUser(),
    ];
    const s = await post(author, { status: "react" });
    for (const u of [blocked, muted])
      await act(u, `/api/v1/pleroma/statuses/${s.id}/reactions/${encodeURIComponent("👍")}`, undefined, "PUT");
    const far = await remoteAccount();
    await env.DB.prepare(
      "INSERT INTO emoji_reactions (id, account_id, status_id, emoji, created_at) VALUES (?, ?, ?, '👍', ?)",
    )
      .bind(newId(), far.id, s.id, Date.now())
      .run();
    const reactors = async () => {
      const list = await json(`/api/v1/pleroma/statuses/${s.id}/reactions`, { token: viewer.token });
      list.forEach((r: unknown) => valid(EmojiReactionAccountsSchema, r));
      return list.flatMap((r: any) => r.accounts.map((a: any) => a.id)).sort();
    };
    expect(await reactors()).toEqual([blocked.id, muted.id, far.id].sort());
    await act(viewer, `/api/v1/accounts/${blocked.id}/block`);
    await act(viewer, "/api/v1/domain_blocks", { domain: far.domain });
    await act(viewer, `/api/v1/accounts/${muted.id}/mute`, { expires_in: 3600 });
    expect(await reactors()).toEqual([]);
    await expireMute(viewer, muted);
    expect(await reactors()).toEqual([muted.id]);
  });
});
