/** Domains the user blocks. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import type { AppEnv } from "../app";
import { db } from "../db/client";
import { domainBlocks } from "../db/schema";
import { badRequest } from "../http/errors";
import { inOrder, pageParams, pageQuery, setLinkHeader } from "../http/pagination";
import { route } from "../http/route";
import { and } from "drizzle-orm";
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
      const q = pageQuery(domainBlocks.id, p);
      const rows = inOrder(
        await db(c.env).select().from(domainBlocks).where(and(eq(domainBlocks.accountId, auth.account.id), q.where)).orderBy(q.orderBy).limit(q.limit),
        q,
      );
      setLinkHeader(c, rows.map((r) => r.id));
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
