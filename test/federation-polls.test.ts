/**
 * Polls between two Starling instances (A and B of test/instances.ts): a vote in a remote poll goes to its author
 * as Mastodon's Create{Note}, is counted there, and the author's Update{Question} brings the tallies back; both
 * directions. Other servers' shapes (Mastodon's vote, Pleroma's Answer, Mastodon's Update of a Question) come
 * from test/fixtures/federation/ through the test peer.
 */
import { describe, expect, it } from "vitest";
import { StatusSchema, PollSchema } from "../src/schemas/status";
import { AccountSchema } from "../src/schemas/account";
import { closeEndedPolls } from "../src/services/notifications";
import { db } from "../src/db/client";
import { call, json, registerUser, valid, type TestUser } from "./helpers";
import { A, B, federating, type Instance } from "./instances";

const fed = federating();

async function find(user: TestUser, from: Instance, other: TestUser, on: Instance) {
  const found = await json(`/api/v2/search?q=${encodeURIComponent(`@${other.username}@${on.domain}`)}&resolve=true&type=accounts`, { instance: from, token: user.token });
  expect(found.accounts).toHaveLength(1);
  return valid(AccountSchema, found.accounts[0]);
}

/** `user` on `from` follows `other` on `on` (accepted: unlocked). */
async function follow(user: TestUser, from: Instance, other: TestUser, on: Instance) {
  const remote = await find(user, from, other, on);
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

const poll = async (user: TestUser, inst: Instance, id: string) => valid(PollSchema, await json(`/api/v1/polls/${id}`, { instance: inst, token: user.token }));
const counts = (p: { options: { votes_count: number | null }[] }) => p.options.map((o) => o.votes_count);

/** The JSON bodies POSTed to `host`'s inboxes so far. */
async function posted(host: string) {
  const reqs = fed.routed.requests.filter((r) => r.method === "POST" && r.url.startsWith(`https://${host}/`) && r.url.includes("inbox"));
  return Promise.all(reqs.map((r) => r.clone().json() as Promise<any>));
}

describe("polls across instances", () => {
  it("A votes in B's poll: Create{Note} per choice to the author only, counted on B, B's Update{Question} brings the tally to A", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    const carol = await registerUser({ instance: A });
    await follow(alice, A, bob, B);
    const made = valid(StatusSchema, await json("/api/v1/statuses", { method: "POST", instance: B, token: bob.token, body: { status: "Tea or coffee?", poll: { options: ["tea", "coffee", "water"], expires_in: 3600 } } }));
    await fed.settle();
    const onA = await homeCopy(alice, A, made.uri);
    expect(onA.poll).toBeTruthy();
    expect(counts(onA.poll!)).toEqual([0, 0, 0]);

    // Alice votes: stored here at once (voted, own_votes, counted in), and a second vote is refused.
    const voted = valid(PollSchema, await json(`/api/v1/polls/${onA.poll!.id}/votes`, { method: "POST", instance: A, token: alice.token, body: { choices: [1] } }));
    expect(voted).toMatchObject({ voted: true, own_votes: [1], votes_count: 1, voters_count: 1 });
    expect(counts(voted)).toEqual([0, 1, 0]);
    const again = await call(`/api/v1/polls/${onA.poll!.id}/votes`, { method: "POST", instance: A, token: alice.token, body: { choices: [0] } });
    expect(again.status).toBe(422);
    await fed.settle();

    // Mastodon's VoteSerializer shape, to Bob's own inbox.
    const votes = (await posted(B.domain)).filter((d) => d.type === "Create" && d.object?.name !== undefined);
    expect(votes).toHaveLength(1);
    const aliceUri = `https://a.example/users/${alice.username}`;
    expect(votes[0]).toMatchObject({ type: "Create", actor: aliceUri, to: `https://b.example/users/${bob.username}` });
    expect(votes[0].id).toMatch(new RegExp(`^${aliceUri}#votes/[^/]+/activity$`));
    expect(votes[0].object).toMatchObject({ type: "Note", name: "coffee", attributedTo: aliceUri, inReplyTo: made.uri, to: `https://b.example/users/${bob.username}` });
    expect(votes[0].object.content).toBeUndefined();
    const toBobInbox = fed.routed.requests.filter((r) => r.method === "POST" && r.url === `https://b.example/users/${bob.username}/inbox`);
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
    const made = valid(StatusSchema, await json("/api/v1/statuses", { method: "POST", instance: A, token: alice.token, body: { status: "Pick any", poll: { options: ["red", "green", "blue"], expires_in: 600, multiple: true } } }));
    await fed.settle();
    const onB = await homeCopy(bob, B, made.uri);
    expect(onB.poll!.multiple).toBe(true);

    const voted = valid(PollSchema, await json(`/api/v1/polls/${onB.poll!.id}/votes`, { method: "POST", instance: B, token: bob.token, body: { choices: [0, 2] } }));
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
    await db(A.bindings).$client.prepare("UPDATE polls SET expires_at = ? WHERE id = ?").bind(Date.now() - 1000, made.poll!.id).run();
    await closeEndedPolls(db(A.bindings), Date.now());
    await fed.settle();
    const finals = (await posted(B.domain)).filter((d) => d.type === "Update" && d.object?.type === "Question");
    expect(finals.length).toBe(before + 1);
    expect(finals.at(-1).object.closed).toBeTruthy();
    const ended = await poll(bob, B, onB.poll!.id);
    expect(ended.expired).toBe(true);
    // A closed poll refuses votes on both sides.
    const late = await call(`/api/v1/polls/${onB.poll!.id}/votes`, { method: "POST", instance: B, token: (await registerUser({ instance: B })).token, body: { choices: [1] } });
    expect(late.status).toBe(422);
  });
});
