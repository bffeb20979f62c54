/** Fedify's message queue on a Durable Object: enqueue, the alarm delivers, failures are retried later, nothing lost. */
import { env } from "cloudflare:test";
import { Follow } from "@fedify/vocab";
import { afterEach, describe, expect, it } from "vitest";
import { federationContext } from "../src/federation";
import { MAX_ATTEMPTS, retryDelay } from "../src/objects/federation-queue";
import { BASE, registerUser } from "./helpers";

const refuse = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = refuse;
});

const queue = () => env.FEDERATION_QUEUE.get(env.FEDERATION_QUEUE.idFromName("default"));

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("federation queue", () => {
  it("delivers a signed activity from its alarm, retrying a failed delivery later without losing it", async () => {
    const u = await registerUser();
    const inbox = `https://remote.example/users/bob${Date.now()}/inbox`;
    // Read inside the mock: bodies made in the queue object cannot be read from the test's context.
    const seen: { method: string; headers: Headers; body: string }[] = [];
    let up = false;
    globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const req = new Request(input, init);
      if (req.url !== inbox) return refuse(input, init);
      seen.push({ method: req.method, headers: new Headers(req.headers), body: await req.text() });
      return up ? new Response(null, { status: 202 }) : new Response("busy", { status: 503 });
    }) as typeof fetch;

    const ctx = await federationContext(env, BASE);
    const activity = new Follow({
      id: new URL(`${BASE}/test/follows/${crypto.randomUUID()}`),
      actor: ctx.getActorUri(u.username),
      object: new URL(inbox.replace(/\/inbox$/, "")),
    });
    await ctx.sendActivity(
      { identifier: u.username },
      { id: new URL(inbox.replace(/\/inbox$/, "")), inboxId: new URL(inbox) },
      activity,
    );

    // The alarm tried once, failed (503), and kept the message for later with its error.
    const failed = await until("a failed attempt", async () => {
      const rows = (await queue().rows()).filter((r) => r.body.includes(inbox));
      return rows.length === 1 && rows[0]!.attempts === 1 ? rows[0]! : null;
    });
    // One attempt may knock twice (RFC 9421 first, then draft-cavage signatures).
    const firstAttempt = seen.length;
    expect(firstAttempt).toBeGreaterThanOrEqual(1);
    expect(firstAttempt).toBeLessThanOrEqual(2);
    expect(failed.last_error).toMatch(/503|busy/);
    expect(failed.ready_at! - Date.now()).toBeGreaterThan(retryDelay(1) - 5_000);
    const depth = await queue().depth();
    expect(depth.queued).toBeGreaterThanOrEqual(1);

    // The remote comes back; the retry (made due now) delivers, signed by the local actor's key.
    up = true;
    await queue().retryNow();
    await until("the delivery", async () => ((await queue().rows()).some((r) => r.body.includes(inbox)) ? null : true));
    expect(seen.length).toBeGreaterThan(firstAttempt);
    const delivered = seen[seen.length - 1]!;
    expect(delivered.method).toBe("POST");
    const signature = delivered.headers.get("signature") ?? delivered.headers.get("signature-input");
    expect(signature).toContain(`${BASE}/users/${u.username}`);
    const body = JSON.parse(delivered.body);
    expect(body).toMatchObject({ type: "Follow", id: activity.id!.href, actor: `${BASE}/users/${u.username}` });
  });

  it("backs off exponentially and keeps a message it gives up on", () => {
    expect(retryDelay(1)).toBe(30_000);
    expect(retryDelay(2)).toBe(60_000);
    expect(retryDelay(30)).toBe(6 * 3600_000);
    let total = 0;
    for (let a = 1; a < MAX_ATTEMPTS; a++) total += retryDelay(a);
    // Retried for about two days before a message is marked dead (kept, not deleted).
    expect(total).toBeGreaterThan(36 * 3600_000);
    expect(total).toBeLessThan(4 * 24 * 3600_000);
  });
});
