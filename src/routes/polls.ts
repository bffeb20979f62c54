import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { arrayParam, intParam } from "../http/params";
import { after, route, type Ctx } from "../http/route";
import { PollSchema } from "../schemas/status";
import { vote } from "../services/status-actions";
import { visiblePollStatus } from "../services/statuses";
import { loadStatus } from "./status-answer";

/** The poll as its status shows it to the viewer (one hydration, same renderer). */
async function pollAnswer(c: Ctx, pollId: string, viewerId: string | null) {
  const s = await visiblePollStatus(db(c.env), pollId, viewerId);
  return (await loadStatus(c, s.id, viewerId)).poll;
}

export function registerPollRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/polls/:id",
    summary: "A poll",
    tags: ["Polls"],
    auth: "optional",
    scopes: ["read:statuses"],
    params: z.object({ id: z.string() }),
    response: PollSchema,
    handler: async (c, p, auth) => c.json(await pollAnswer(c, p.id, auth?.account?.id ?? null)),
  });
  route(app, {
    method: "post",
    path: "/api/v1/polls/:id/votes",
    summary: "Vote in a poll",
    tags: ["Polls"],
    auth: "user",
    scopes: ["write:statuses"],
    params: z.object({ id: z.string(), choices: arrayParam(intParam()) }),
    response: PollSchema,
    handler: async (c, p, auth) => {
      after(c, (await vote(db(c.env), auth.account, p.id, p.choices)).effects);
      return c.json(await pollAnswer(c, p.id, auth.account.id));
    },
  });
}
