/**
 * Polls between two Starling instances (A and B of test/instances.ts): a vote in a remote poll goes to its author
 * as Mastodon's Create{Note}, is counted there, and the author's Update{Question} brings the tallies back; both
 * directions. Other servers' shapes (Mastodon's vote, Pleroma's Answer, Mastodon's Update of a Question) come
 * from test/fixtures/federation/ through the test peer.
 */
import { describe, expect, it } from "vitest";
import { StatusSchema, PollSchema } from "../src/schemas/status";
import { closeEndedPolls } from "../src/services/notifications";
import { db } from "../src/db/client";
import { call, json, registerUser, valid, type TestUser } from "./helpers";
import { A, B, federating, type Instance, findRemote } from "./instances";
import { createPeer } from "./peer";
import { fill } from "./inbound";
import mastodonVote from "./fixtures/federation/mastodon-vote.json";
import pleromaAnswer from "./fixtures/federation/pleroma-answer.json";
import mastodonUpdateQuestion from "./fixtures/federation/mastodon-update-question.json";
import { env } from "cloudflare:test";

const fed = federating();

/** `user` on `from` follows `other` on `on` (accepted: unlocked). */
async function follow(user: TestUser, from: Instance, other: TestUser, on: Instance) {
  const remote = await findRemote(user, from, other, on);
  await json(`/api/v1/accounts/${remote.id}/follow`, { method: "POST", instance: from, token: user.token });
  await fed.settle();
  return remote;
}

/** The copy of a status (by its uri) in `user`'s home timeline on `inst`. */
async function homeCopy(user: TestUser, inst: Instance, uri: string) {
  const home = (await json("/api/v1/timelines/home", { instance: inst, token: user.token })) as unknown[];
  const s = home.map((x) => valid(StatusSchema, x)).find((x) => x.uri === uri);
  expect(s, `status ${uri} on ${inst.domain}`).toBeTruthy();
  return s!;
}

const poll = async (user: TestUser, inst: Instance, id: string) =>
  valid(PollSchema, await json(`/api/v1/polls/${id}`, { instance: inst, token: user.token }));
const counts = (p: { options: { votes_count: number | null }[] }) => p.options.map((o) => o.votes_count);

/** The JSON bodies POSTed to `host`'s inboxes so far. */
async function posted(host: string) {
  const reqs = fed.routed.requests.filter(
    (r) => r.method === "POST" && r.url.startsWith(`https://${host}/`) && r.url.includes("inbox"),
  );
  return Promise.all(reqs.map((r) => r.clone().json() as Promise<any>));
}

describe("polls across instances", () => {
  it("A votes in B's poll: Create{Note} per choice to the author only, counted on B, B's Update{Question} brings the tally to A", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    const carol = await registerUser({ instance: A });
    await follow(alice, A, bob, B);
    const made = valid(
      StatusSchema,
      await json("/api/v1/statuses", {
        method: "POST",
        instance: B,
        token: bob.token,
        body: { status: "Tea or coffee?", poll: { options: ["tea", "coffee", "water"], expires_in: 3600 } },
      }),
    );
    await fed.settle();
    const onA = await homeCopy(alice, A, made.uri);
    expect(onA.poll).toBeTruthy();
    expect(counts(onA.poll!)).toEqual([0, 0, 0]);

    // Alice votes: stored here at once (voted, own_votes, counted in), and a second vote is refused.
    const voted = valid(
      PollSchema,
      await json(`/api/v1/polls/${onA.poll!.id}/votes`, {
        method: "POST",
        instance: A,
        token: alice.token,
        body: { choices: [1] },
      }),
    );
    expect(voted).toMatchObject({ voted: true, own_votes: [1], votes_count: 1, voters_count: 1 });
    expect(counts(voted)).toEqual([0, 1, 0]);
    const again = await call(`/api/v1/polls/${onA.poll!.id}/votes`, {
      method: "POST",
      instance: A,
      token: alice.token,
      body: { choices: [0] },
    });
    expect(again.status).toBe(422);
    await fed.settle();

    // Mastodon's VoteSerializer shape, to Bob's own inbox.
    const votes = (await posted(B.domain)).filter((d) => d.type === "Create" && d.object?.name !== undefined);
    expect(votes).toHaveLength(1);
    const aliceUri = `https://a.example/users/${alice.username}`;
    expect(votes[0]).toMatchObject({ type: "Create", actor: aliceUri, to: `https://b.example/users/${bob.username}` });
    expect(votes[0].id).toMatch(new RegExp(`^${aliceUri}#votes/[^/]+/activity$`));
    expect(votes[0].object).toMatchObject({
      type: "Note",
      name: "coffee",
      attributedTo: aliceUri,
      inReplyTo: made.uri,
      to: `https://b.example/users/${bob.username}`,
    });
    expect(votes[0].object.content).toBeUndefined();
    const toBobInbox = fed.routed.requests.filter(
      (r) => r.method === "POST" && r.url === `https://b.example/users/${bob.username}/inbox`,
    );
    expect(toBobInbox.length).toBeGreaterThan(0);

    // Counted on B (not stored as a status: Bob has no reply, no notification of a mention).
    const onB = await poll(bob, B, made.poll!.id);
    expect(counts(onB)).toEqual([0, 1, 0]);
    expect(onB.voters_count).toBe(1);
    const bobStatus = valid(StatusSchema, await json(`/api/v1/statuses/${made.id}`, { instance: B, token: bob.token }));
    expect(bobStatus.replies_count).toBe(0);
    const ctx = await json(`/api/v1/statuses/${made.id}/context`, { instance: B, token: bob.token });
    expect(ctx.descendants).toEqual([]);

    // B sent Update{Question} with the tallies to its followers (A): A shows B's numbers (not counted twice).
    const updates = (await posted(A.domain)).filter((d) => d.type === "Update" && d.object?.type === "Question");
    expect(updates.length).toBeGreaterThan(0);
    expect(updates[0].object.oneOf.map((o: any) => o.replies.totalItems)).toEqual([0, 1, 0]);
    const afterUpdate = await poll(alice, A, onA.poll!.id);
    expect(afterUpdate).toMatchObject({ votes_count: 1, voters_count: 1, voted: true, own_votes: [1] });
    // Another local user sees B's tally, and has not voted.
    const forCarol = await poll(carol, A, onA.poll!.id);
    expect(forCarol).toMatchObject({ voted: false, own_votes: [] });
    expect(counts(forCarol)).toEqual([0, 1, 0]);
    // The Update was not taken for an edit.
    const edited = valid(StatusSchema, await json(`/api/v1/statuses/${onA.id}`, { instance: A, token: alice.token }));
    expect(edited.edited_at).toBeNull();
  });

  it("B votes in A's multiple-choice poll (one Create per choice), tallies on both sides; the end sends the final Update", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    await follow(bob, B, alice, A);
    const made = valid(
      StatusSchema,
      await json("/api/v1/statuses", {
        method: "POST",
        instance: A,
        token: alice.token,
        body: { status: "Pick any", poll: { options: ["red", "green", "blue"], expires_in: 600, multiple: true } },
      }),
    );
    await fed.settle();
    const onB = await homeCopy(bob, B, made.uri);
    expect(onB.poll!.multiple).toBe(true);

    const voted = valid(
      PollSchema,
      await json(`/api/v1/polls/${onB.poll!.id}/votes`, {
        method: "POST",
        instance: B,
        token: bob.token,
        body: { choices: [0, 2] },
      }),
    );
    expect(counts(voted)).toEqual([1, 0, 1]);
    expect(voted.voters_count).toBe(1);
    await fed.settle();
    const votes = (await posted(A.domain)).filter((d) => d.type === "Create" && d.object?.inReplyTo === made.uri);
    expect(votes.map((v) => v.object.name).sort()).toEqual(["blue", "red"]);

    const onA = await poll(alice, A, made.poll!.id);
    expect(counts(onA)).toEqual([1, 0, 1]);
    expect(onA.voters_count).toBe(1);
    expect(onA.votes_count).toBe(2);
    // B got A's tallies back (Update{Question}, anyOf): same numbers, not doubled.
    const back = await poll(bob, B, onB.poll!.id);
    expect(counts(back)).toEqual([1, 0, 1]);
    expect(back).toMatchObject({ voters_count: 1, own_votes: [0, 2], voted: true });

    // The poll ends (the cron): the final Update goes to B.
    const before = (await posted(B.domain)).filter((d) => d.type === "Update").length;
    await db(A.bindings)
      .$client.prepare("UPDATE polls SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1000, made.poll!.id)
      .run();
    await closeEndedPolls(db(A.bindings), Date.now());
    await fed.settle();
    const finals = (await posted(B.domain)).filter((d) => d.type === "Update" && d.object?.type === "Question");
    expect(finals.length).toBe(before + 1);
    expect(finals.at(-1).object.closed).toBeTruthy();
    const ended = await poll(bob, B, onB.poll!.id);
    expect(ended.expired).toBe(true);
    // A closed poll refuses votes on both sides.
    const late = await call(`/api/v1/polls/${onB.poll!.id}/votes`, {
      method: "POST",
      instance: B,
      token: (await registerUser({ instance: B })).token,
      body: { choices: [1] },
    });
    expect(late.status).toBe(422);
  });
});

describe("votes and tallies from other servers (fixtures through the test peer)", () => {
  let n = 0;
  const accepted = async (res: Response) => expect(res.status, await res.text()).toBe(202);

  it("Mastodon's vote and Pleroma's Answer are counted once, within the rules; nothing else is", async () => {
    const peer = createPeer();
    const unroute = peer.route();
    try {
      const alice = await registerUser({ instance: A });
      const target = `${A.origin}/users/${alice.username}`;
      const pollStatus = async (body: Record<string, unknown>) =>
        valid(StatusSchema, await json("/api/v1/statuses", { method: "POST", instance: A, token: alice.token, body }));
      const single = await pollStatus({ status: "Yes or no?", poll: { options: ["yes", "no"], expires_in: 3600 } });
      const vars = (actor: string, question: string, option: string) => ({
        ACTOR: actor,
        ORIGIN: peer.origin,
        TARGET: target,
        QUESTION: question,
        OPTION: option,
        CONTEXT: `${peer.origin}/contexts/${n}`,
        N: String(Date.now() * 100 + n++),
      });
      const [mallory, pat, quinn] = [peer.actor(), peer.actor(), peer.actor()];

      await accepted(await peer.send(mallory, fill(mastodonVote, vars(mallory, single.uri, "yes"))));
      expect(counts(await poll(alice, A, single.poll!.id))).toEqual([1, 0]);
      // A second vote in a single-choice poll (a new activity), an unknown option, a vote attributed to someone
      // else: acknowledged, nothing counted.
      await accepted(await peer.send(mallory, fill(mastodonVote, vars(mallory, single.uri, "no"))));
      await accepted(await peer.send(pat, fill(mastodonVote, vars(pat, single.uri, "maybe"))));
      const forged = fill(mastodonVote, vars(pat, single.uri, "no"));
      forged.object.attributedTo = quinn;
      await accepted(await peer.send(pat, forged));
      // Pleroma's Answer counts.
      await accepted(await peer.send(quinn, fill(pleromaAnswer, vars(quinn, single.uri, "no"))));
      const tally = await poll(alice, A, single.poll!.id);
      expect(counts(tally)).toEqual([1, 1]);
      expect(tally.voters_count).toBe(2);
      // Votes are not statuses: no reply, no notification.
      const ctx = await json(`/api/v1/statuses/${single.id}/context`, { instance: A, token: alice.token });
      expect(ctx.descendants).toEqual([]);
      const notes = (await json("/api/v1/notifications", { instance: A, token: alice.token })) as unknown[];
      expect(notes).toEqual([]);

      // An account the author blocks cannot vote.
      const blocked = peer.actor();
      await accepted(await peer.send(blocked, fill(mastodonVote, vars(blocked, single.uri, "maybe"))));
      const blockedId = (await env.DB.prepare("SELECT id FROM accounts WHERE uri = ?")
        .bind(blocked)
        .first<{ id: string }>())!.id;
      await json(`/api/v1/accounts/${blockedId}/block`, { method: "POST", instance: A, token: alice.token });
      await accepted(await peer.send(blocked, fill(mastodonVote, vars(blocked, single.uri, "yes"))));
      expect(counts(await poll(alice, A, single.poll!.id))).toEqual([1, 1]);

      // A followers-only poll: a stranger's vote is refused. An ended poll: refused.
      const secret = await pollStatus({
        status: "Friends only",
        visibility: "private",
        poll: { options: ["yes", "no"], expires_in: 3600 },
      });
      await accepted(await peer.send(pat, fill(mastodonVote, vars(pat, secret.uri, "yes"))));
      expect(counts(await poll(alice, A, secret.poll!.id))).toEqual([0, 0]);
      const ended = await pollStatus({ status: "Over", poll: { options: ["yes", "no"], expires_in: 3600 } });
      await env.DB.prepare("UPDATE polls SET expires_at = ? WHERE id = ?")
        .bind(Date.now() - 1000, ended.poll!.id)
        .run();
      await accepted(await peer.send(pat, fill(mastodonVote, vars(pat, ended.uri, "yes"))));
      expect(counts(await poll(alice, A, ended.poll!.id))).toEqual([0, 0]);

      // A counted vote wrote the Update{Question} for the servers that have the poll (here: its voters).
      const rows = await env.DB.prepare(
        "SELECT activity FROM federation_outbox WHERE account_id = ? AND activity LIKE '%UpdatePoll%'",
      )
        .bind(single.account.id)
        .all();
      expect(rows.results.length).toBeGreaterThan(0);
    } finally {
      unroute();
    }
  });

  it("Mastodon's Update{Question} replaces a remote poll's tallies (from its author only) and is no edit", async () => {
    const peer = createPeer();
    const unroute = peer.route();
    try {
      const alice = await registerUser({ instance: A });
      const target = `${A.origin}/users/${alice.username}`;
      const [author, other] = [peer.actor(), peer.actor()];
      const v = {
        ACTOR: author,
        ORIGIN: peer.origin,
        NAME: "author",
        N: String(Date.now() * 100 + n++),
        UPDATED: "1",
        END: new Date(Date.now() + 3600_000).toISOString(),
      };
      const update = fill(mastodonUpdateQuestion, v);
      // First the Create of the Question (addressed to Alice, so it is stored), with no votes yet.
      const question = structuredClone(update.object);
      question.cc.push(target);
      for (const o of question.oneOf) o.replies.totalItems = 0;
      question.votersCount = 0;
      await accepted(
        await peer.send(author, {
          "@context": update["@context"],
          id: `${question.id}/activity`,
          type: "Create",
          actor: author,
          to: question.to,
          cc: question.cc,
          object: question,
        }),
      );
      const stored = (
        await json(`/api/v2/search?q=${encodeURIComponent(question.id)}&type=statuses`, {
          instance: A,
          token: alice.token,
        })
      ).statuses[0];
      const status = valid(
        StatusSchema,
        stored ?? (await json("/api/v1/timelines/home", { instance: A, token: alice.token }))[0],
      );
      expect(status.uri).toBe(question.id);
      expect(counts(status.poll!)).toEqual([0, 0]);

      // Someone else's Update changes nothing.
      const notMine = fill(mastodonUpdateQuestion, { ...v, ACTOR: other });
      notMine.object.id = question.id;
      await accepted(await peer.send(other, notMine));
      expect(counts(await poll(alice, A, status.poll!.id))).toEqual([0, 0]);

      await accepted(await peer.send(author, update));
      const p = await poll(alice, A, status.poll!.id);
      expect(counts(p)).toEqual([5, 2]);
      expect(p).toMatchObject({ votes_count: 7, voters_count: 7, voted: false });
      const after = valid(
        StatusSchema,
        await json(`/api/v1/statuses/${status.id}`, { instance: A, token: alice.token }),
      );
      expect(after.edited_at).toBeNull();
      expect(after.content).toContain("Which one?");

      // An edit of the options (an explicit edit: `updated`) is a new poll: the new options and their tallies.
      const edit = fill(mastodonUpdateQuestion, { ...v, UPDATED: "2" });
      edit.object.updated = new Date().toISOString();
      edit.object.oneOf = [
        { type: "Note", name: "these", replies: { type: "Collection", totalItems: 1 } },
        { type: "Note", name: "those", replies: { type: "Collection", totalItems: 0 } },
        { type: "Note", name: "neither", replies: { type: "Collection", totalItems: 0 } },
      ];
      edit.object.votersCount = 1;
      await accepted(await peer.send(author, edit));
      const edited = await poll(alice, A, status.poll!.id);
      expect(edited.options.map((o) => o.title)).toEqual(["these", "those", "neither"]);
      expect(counts(edited)).toEqual([1, 0, 0]);
    } finally {
      unroute();
    }
  });
});
