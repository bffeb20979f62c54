/**
 * Mastodon's "limit" (silence) of a domain (issue 48), through the inbox: a silenced domain's posts stay off the
 * federated timeline (Pleroma's `federated_timeline_removal`, as before), and its accounts' follows of local users
 * need approval even when the local account is unlocked. Lifting the silence lifts both.
 */
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { json, registerUser, valid, type TestUser } from "./helpers";
import { A } from "./instances";
import { drainFederation } from "../src/federation/delivery/wake";
import { expectAccepted, fill, q, remoteId, setup, unroute } from "./inbound";
import { AccountSchema, RelationshipSchema } from "../src/schemas/account";
import { NotificationSchema } from "../src/schemas/social";
import mastodonFollow from "./fixtures/federation/mastodon-follow.json";
import mastodonCreate from "./fixtures/federation/mastodon-create-note.json";

afterEach(unroute);

async function admin(): Promise<TestUser> {
  const u = await registerUser({ instance: A, scopes: "read write follow push admin" });
  await env.DB.prepare("UPDATE users SET is_admin = 1 WHERE account_id = ?").bind(u.id).run();
  return u;
}

const silence = (a: TestUser, domain: string) =>
  json("/api/v1/admin/domain_blocks", {
    instance: A,
    method: "POST",
    token: a.token,
    body: { domain, severity: "silence" },
  });
const lift = (a: TestUser, domain: string) =>
  json(`/api/v1/admin/domain_blocks/${domain}`, { instance: A, method: "DELETE", token: a.token });

const relationship = async (u: TestUser, id: string) =>
  valid(
    RelationshipSchema,
    (await json(`/api/v1/accounts/relationships?id[]=${id}`, { instance: A, token: u.token }))[0],
  );

describe("a silenced (limited) domain", () => {
  it("its follows of an unlocked local user become requests; its public posts stay off the federated timeline", async () => {
    const a = await admin();
    await silence(a, "peer.example");
    try {
      const s = await setup();
      await expectAccepted(await s.peer.send(s.actor, fill(mastodonFollow, s.vars)));
      const them = (await remoteId(s.actor))!;
      expect(await q("SELECT count(*) AS n FROM follows WHERE account_id = ?", them)).toEqual([{ n: 0 }]);
      expect(await relationship(s.user, them)).toMatchObject({ followed_by: false });
      const requests = z
        .array(AccountSchema)
        .parse(await json("/api/v1/follow_requests", { instance: A, token: s.user.token }));
      expect(requests.map((r) => r.id)).toEqual([them]);
      const notes = z
        .array(NotificationSchema)
        .parse(await json("/api/v1/notifications", { instance: A, token: s.user.token }));
      expect(notes.map((n) => n.type)).toEqual(["follow_request"]);
      // No Accept went out until the user decided.
      const accepts = () => s.peer.delivered.filter((d) => (d.body as { type?: string } | null)?.type === "Accept");
      await drainFederation(A.bindings);
      expect(accepts()).toEqual([]);
      await json(`/api/v1/follow_requests/${them}/authorize`, { instance: A, method: "POST", token: s.user.token });
      expect(await relationship(s.user, them)).toMatchObject({ followed_by: true });
      await drainFederation(A.bindings);
      expect(accepts()).toHaveLength(1);

      // The older limit holds too: a public post arrives unlisted.
      await expectAccepted(await s.peer.send(s.actor, fill(mastodonCreate, { ...s.vars, N: `${s.vars.N}c` })));
      expect(await q("SELECT visibility FROM statuses WHERE uri = ?", `${s.actor}/statuses/${s.vars.N}c`)).toEqual([
        { visibility: "unlisted" },
      ]);

      // Lifted: the next actor's follow is a follow at once.
      await lift(a, "peer.example");
      const t = await setup();
      await expectAccepted(await t.peer.send(t.actor, fill(mastodonFollow, t.vars)));
      expect(await relationship(t.user, (await remoteId(t.actor))!)).toMatchObject({ followed_by: true });
    } finally {
      await env.DB.prepare("DELETE FROM federation_policies").run();
    }
  });

  it("a silence of another domain changes nothing for this one", async () => {
    const a = await admin();
    await silence(a, "elsewhere.example");
    try {
      const s = await setup();
      await expectAccepted(await s.peer.send(s.actor, fill(mastodonFollow, s.vars)));
      expect(await relationship(s.user, (await remoteId(s.actor))!)).toMatchObject({ followed_by: true });
    } finally {
      await env.DB.prepare("DELETE FROM federation_policies").run();
    }
  });
});
