/**
 * E-mail addresses from clients are checked in linear time and at most 320 characters long: the pattern they were
 * matched with backtracked quadratically, and "a@" followed by 100,000 dots and "@" cost seconds of CPU per
 * registration attempt.
 */
import { describe, expect, it } from "vitest";
import { appToken, call, freshIp, makeApp, registerUser } from "./helpers";

const HOSTILE = "a@" + ".".repeat(100_000) + "@";

/** Calls, and checks that the answer came quickly (the Worker's CPU time shows as wall time here). */
async function quick(path: string, opts: Parameters<typeof call>[1]) {
  const started = performance.now();
  const res = await call(path, opts);
  const text = await res.text();
  expect(performance.now() - started, `${path} took too long`).toBeLessThan(1_000);
  return { status: res.status, body: JSON.parse(text) as Record<string, unknown> };
}

describe("e-mail addresses", () => {
  it("refuses a long hostile address at registration quickly, with a 4xx", async () => {
    const token = await appToken(await makeApp());
    const body = { username: "hostile", email: HOSTILE, password: "correct horse battery", agreement: true };
    const r = await quick("/api/v1/accounts", { token, body, headers: { "cf-connecting-ip": freshIp() } });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(typeof r.body.error).toBe("string");
    // Within the length bound, the same shape is refused as a bad address, as quickly.
    const short = "a@" + ".".repeat(300) + "@";
    const s = await quick("/api/v1/accounts", {
      token,
      body: { ...body, email: short },
      headers: { "cf-connecting-ip": freshIp() },
    });
    expect(s.status, JSON.stringify(s.body)).toBe(400);
    expect(JSON.stringify(s.body)).toContain("invalid format");
  });

  it("tells good addresses from bad ones as before", async () => {
    const token = await appToken(await makeApp());
    for (const [email, ok] of [
      ["someone@example.com", true],
      ["a@b.c", true],
      ["a@b..", true],
      ["a@b.", false],
      ["a@.b", false],
      ["@b.c", false],
      ["a b@c.d", false],
      ["a@b@c.d", false],
      ["a@bc", false],
    ] as const) {
      const res = await call("/api/v1/accounts", {
        token,
        body: {
          username: `mail${Math.random().toString(36).slice(2, 8)}`,
          email,
          password: "correct horse battery",
          agreement: true,
        },
        headers: { "cf-connecting-ip": freshIp() },
      });
      const text = await res.text();
      expect(res.status === 200, `${email}: ${text.slice(0, 200)}`).toBe(ok);
      if (!ok) expect(text, email).toContain("invalid format");
    }
  });

  it("refuses a long hostile address on change_email quickly", async () => {
    const u = await registerUser();
    const r = await quick("/api/v1/pleroma/change_email", {
      token: u.token,
      body: { password: u.password, email: HOSTILE },
    });
    expect(r.status).toBeLessThan(500);
    expect(typeof r.body.error).toBe("string");
  });
});
