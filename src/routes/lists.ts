/** Lists and their members. Another user's list answers 404, as if it did not exist. */
import { accountToActOn } from "../services/accounts";
import { hostOf } from "../http/urls";
import { ListSchema } from "../schemas/social";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { pageParams } from "../http/pagination";
import { arrayParam, intParam } from "../http/params";
import { after, route } from "../http/route";
import { AccountSchema } from "../schemas/account";
import { listMembers } from "../services/account-pages";
import { renderList } from "../render/list";
import * as lists from "../services/lists";
import { answerAccounts } from "./account-list";

const title = z.string().trim().min(1, "can't be blank").max(200);
const accountIds = arrayParam(z.string(), 250).pipe(z.array(z.string()).min(1));

export function registerListRoutes(app: OpenAPIHono<AppEnv>) {
  const read = ["read:lists"];
  const write = ["write:lists"];
  route(app, {
    method: "get",
    path: "/api/v1/lists",
    summary: "The user's lists",
    tags: ["Lists"],
    auth: "user",
    scopes: read,
    response: z.array(ListSchema),
    handler: async (c, _p, auth) => c.json((await lists.ownLists(db(c.env), auth.account.id)).map(renderList)),
  });
  route(app, {
    method: "post",
    path: "/api/v1/lists",
    summary: "Create a list",
    tags: ["Lists"],
    auth: "user",
    scopes: write,
    params: z.object({ title }),
    response: ListSchema,
    handler: async (c, p, auth) => c.json(renderList(await lists.createList(db(c.env), auth.account.id, p.title))),
  });
  route(app, {
    method: "get",
    path: "/api/v1/lists/:id",
    summary: "A list",
    tags: ["Lists"],
    auth: "user",
    scopes: read,
    params: z.object({ id: z.string() }),
    response: ListSchema,
    handler: async (c, p, auth) => c.json(renderList(await lists.ownList(db(c.env), auth.account.id, p.id))),
  });
  route(app, {
    method: "put",
    path: "/api/v1/lists/:id",
    summary: "Rename a list",
    tags: ["Lists"],
    auth: "user",
    scopes: write,
    params: z.object({ id: z.string(), title }),
    response: ListSchema,
    handler: async (c, p, auth) =>
      c.json(renderList(await lists.renameList(db(c.env), auth.account.id, p.id, p.title))),
  });
  route(app, {
    method: "delete",
    path: "/api/v1/lists/:id",
    summary: "Delete a list",
    tags: ["Lists"],
    auth: "user",
    scopes: write,
    params: z.object({ id: z.string() }),
    response: z.object({}),
    handler: async (c, p, auth) => {
      await lists.deleteList(db(c.env), auth.account.id, p.id);
      return c.json({});
    },
  });
  route(app, {
    method: "get",
    path: "/api/v1/lists/:id/accounts",
    summary: "Members of a list (limit=0: all of them, without pagination)",
    tags: ["Lists"],
    auth: "user",
    scopes: read,
    params: z.object({ id: z.string(), ...pageParams(40), limit: intParam().optional() }),
    response: z.array(AccountSchema),
    handler: async (c, p, auth) => {
      const list = await lists.ownList(db(c.env), auth.account.id, p.id);
      const all = p.limit === 0;
      const limit = p.limit === undefined || p.limit < 0 ? 40 : Math.min(p.limit, 80);
      const rows = await listMembers(db(c.env), list.id, all ? null : { ...p, limit });
      return answerAccounts(c, rows, { viewerId: auth.account.id, link: !all });
    },
  });
  for (const method of ["post", "delete"] as const) {
    route(app, {
      method,
      path: "/api/v1/lists/:id/accounts",
      summary: method === "post" ? "Add followed accounts to a list" : "Remove accounts from a list",
      tags: ["Lists"],
      auth: "user",
      scopes: write,
      params: z.object({ id: z.string(), account_ids: accountIds }),
      response: z.object({}),
      handler: async (c, p, auth) => {
        const ids = [...new Set(p.account_ids)];
        if (method === "post") after(c, await lists.addToList(db(c.env), auth.account.id, p.id, ids));
        else await lists.removeFromList(db(c.env), auth.account.id, p.id, ids);
        return c.json({});
      },
    });
  }
  route(app, {
    method: "get",
    path: "/api/v1/accounts/:id/lists",
    summary: "The user's lists that contain an account",
    tags: ["Lists"],
    auth: "user",
    scopes: read,
    params: z.object({ id: z.string() }),
    response: z.array(ListSchema),
    handler: async (c, p, auth) => {
      const target = await accountToActOn(db(c.env), p.id, hostOf(c));
      return c.json((await lists.listsContaining(db(c.env), auth.account.id, target.account.id)).map(renderList));
    },
  });
}
