import { SELF } from "cloudflare:test";
import { expect, it } from "vitest";

it("answers the instance", async () => {
  const res = await SELF.fetch("http://localhost/api/v1/instance");
  const body = await res.json();
  console.log(res.status, JSON.stringify(body).slice(0, 300));
  expect(res.status).toBe(200);
});
