/**
 * Durations a client gives (`expires_in` of filters, mutes, thread mutes, statuses and polls) are bounded: past
 * ten years they are a 422, never a row whose expiry no date can show. 9,000,000,000,000 seconds once made a
 * filter whose every rendering threw (GET /api/v2/filters, and any timeline page it matched, answered 500).
 */
import { describe, expect, it } from "vitest";
import { call, json, post, registerUser, valid, type TestUser } from "./helpers";
import { FilterV2Schema } from "../src/schemas/filter";
import { FilterSchema } from "../src/schemas/social";
import { AccountSchema } from "../src/schemas/account";
import { StatusSchema } from "../src/schemas/status";

const HUGE = 9_000_000_000_000;
/** Ten years, in seconds: the longest duration taken. */
const TEN_YEARS = 315_576_000;

async function refused(path: string, u: TestUser, body: Record<string, unknown>, method = "POST") {
  const res = await call(path, { method, token: u.token, body });
  const text = await res.text();
  // A parameter out of its range, as every route answers one (http/params.ts).
  expect(res.status, `${path}: ${text.slice(0, 300)}`).toBe(400);
  expect(typeof JSON.parse(text).error).toBe("string");
}

describe("durations are bounded", () => {
  it("refuses a filter expiring past ten years, and its lists still answer", async () => {
    const u = await registerUser();
    await refused("/api/v2/filters", u, { title: "far", context: ["home"], expires_in: HUGE });
    await refused("/api/v2/filters", u, {
      title: "far",
      context: ["home"],
      expires_in: String(TEN_YEARS + 1),
      keywords_attributes: [{ keyword: "far" }],
    });
    await refused("/api/v1/filters", u, { phrase: "far", context: ["home"], expires_in: HUGE });
    expect(await json("/api/v2/filters", { token: u.token })).toEqual([]);
    expect(await json("/api/v1/filters", { token: u.token })).toEqual([]);

    // Ten years is taken, and shown; changing it to more is refused and leaves it as it was.
    const made = valid(
      FilterV2Schema,
      await json("/api/v2/filters", {
        method: "POST",
        token: u.token,
        body: { title: "long", context: ["home"], expires_in: TEN_YEARS, keywords_attributes: [{ keyword: "long" }] },
      }),
    );
    expect(Date.parse(made.expires_at!)).toBeGreaterThan(Date.now() + (TEN_YEARS - 60) * 1000);
    await refused(`/api/v2/filters/${made.id}`, u, { expires_in: HUGE }, "PUT");
    const v1 = valid(FilterSchema, (await json("/api/v1/filters", { token: u.token }))[0]);
    await refused(`/api/v1/filters/${v1.id}`, u, { phrase: "long", context: ["home"], expires_in: HUGE }, "PUT");
    const kept = valid(FilterV2Schema, await json(`/api/v2/filters/${made.id}`, { token: u.token }));
    expect(kept.expires_at).toBe(made.expires_at);
    // A status it matches still renders in a timeline.
    await post(u, { status: "a long story" });
    expect((await json("/api/v1/timelines/home", { token: u.token })).length).toBeGreaterThan(0);
  });

  it("refuses a mute of an account or a thread past ten years; the mutes list still answers", async () => {
    const [u, other] = [await registerUser(), await registerUser()];
    await refused(`/api/v1/accounts/${other.id}/mute`, u, { expires_in: HUGE });
    expect(await json("/api/v1/mutes", { token: u.token })).toEqual([]);
    const s = await post(other, { status: "a thread" });
    await refused(`/api/v1/statuses/${s.id}/mute`, u, { expires_in: HUGE });
    expect(valid(StatusSchema, await json(`/api/v1/statuses/${s.id}`, { token: u.token })).muted).toBe(false);
    // Ten years is taken.
    await json(`/api/v1/accounts/${other.id}/mute`, {
      method: "POST",
      token: u.token,
      body: { expires_in: TEN_YEARS },
    });
    const mutes = await json("/api/v1/mutes", { token: u.token });
    expect(mutes.map((a: unknown) => valid(AccountSchema, a).id)).toEqual([other.id]);
    expect(Date.parse(mutes[0].mute_expires_at)).toBeGreaterThan(Date.now() + (TEN_YEARS - 60) * 1000);
  });

  it("refuses a status or a poll expiring past ten years", async () => {
    const u = await registerUser();
    await refused("/api/v1/statuses", u, { status: "ephemeral", expires_in: HUGE });
    await refused("/api/v1/statuses", u, { status: "poll", poll: { options: ["a", "b"], expires_in: HUGE } });
    expect(await json(`/api/v1/accounts/${u.id}/statuses`, { token: u.token })).toEqual([]);
  });
});
