/** Domains the user blocks. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { badRequest } from "../lib/errors";
import { pageParams, setLinkHeader } from "../http/pagination";
import { route } from "../http/route";
import { blockedDomains } from "../services/account-pages";
import { blockDomain, normaliseDomain, unblockDomain } from "../services/graph";

const domainParam = z.object({ domain: z.string() });

function domainOf(input: string): string {
  const domain = normaliseDomain(input);
  if (!domain) throw badRequest("Invalid domain");
  return domain;
}

export function registerDomainBlockRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/domain_blocks",
    summary: "Domains the user blocks",
    tags: ["Relationships"],
    auth: "user",
    scopes: ["follow", "read:blocks"],
    params: z.object(pageParams(40)),
    response: z.array(z.string()),
    handler: async (c, p, auth) => {
      const rows = await blockedDomains(db(c.env), auth.account.id, p);
      setLinkHeader(
        c,
        rows.map((r) => r.id),
      );
      return c.json(rows.map((r) => r.domain));
    },
  });
  for (const method of ["post", "delete"] as const) {
    route(app, {
      method,
      path: "/api/v1/domain_blocks",
      summary: method === "post" ? "Block a domain: hide it and remove its followers" : "Unblock a domain",
      tags: ["Relationships"],
      auth: "user",
      scopes: ["follow", "write:blocks"],
      params: domainParam,
      response: z.object({}),
      handler: async (c, p, auth) => {
        await (method === "post" ? blockDomain : unblockDomain)(db(c.env), auth.account, domainOf(p.domain));
        return c.json({});
      },
    });
  }
}
