/**
 * Mastodon 4.3's notification endpoints: grouped notifications (`/api/v2/notifications`), the unread counts, the
 * notification policy and notification requests. Registered before routes/notifications.ts, whose
 * `/api/v1/notifications/:id` would otherwise take `unread_count`, `policy` and `requests`.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import type { Page } from "../db/paging";
import type { Auth } from "../http/auth";
import { hydrate } from "../services/hydrate";
import { notFound } from "../lib/errors";
import { pageParams, setLinkHeader } from "../http/pagination";
import { arrayParam, boolParam, enumArrayParam, intParam } from "../http/params";
import { route, type Ctx } from "../http/route";
import { renderContext } from "../http/urls";
import { renderAccount } from "../render/account";
import { renderNotificationGroups, renderNotificationRequests, renderPolicy } from "../render/notification";
import { readPage } from "./page-read";
import { AccountSchema } from "../schemas/account";
import {
  GroupedNotificationsResultsSchema,
  NotificationPolicySchema,
  NotificationPolicyV1Schema,
  NotificationRequestSchema,
} from "../schemas/notification-groups";
import { accountsById } from "../services/conversations";
import * as groups from "../services/notification-groups";
import * as policies from "../services/notification-policy";
import { NOTIFICATION_TYPES, type NotificationQuery } from "../services/notifications";

const types = () => enumArrayParam(NOTIFICATION_TYPES).optional();
const listing = {
  types: types(),
  exclude_types: types(),
  account_id: z.string().optional(),
  grouped_types: types(),
  include_filtered: boolParam().optional(),
};
type ListingParams = { [K in keyof typeof listing]?: z.infer<(typeof listing)[K]> };
const queryOf = (p: ListingParams): NotificationQuery => ({
  include: p.types,
  exclude: p.exclude_types,
  accountId: p.account_id,
  includeFiltered: p.include_filtered,
  newerTypes: true,
});

const policyValue = z.enum(policies.POLICY_VALUES).optional();

export function registerNotificationGroupRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v2/notifications",
    summary: "The user's notifications, grouped (Mastodon 4.3)",
    tags: ["Notifications"],
    auth: "user",
    scopes: ["read:notifications"],
    params: z.object({
      ...pageParams(40),
      ...listing,
      expand_accounts: z.string().optional(),
    }),
    response: GroupedNotificationsResultsSchema,
    authInQuery: true,
    handler: async (c, p, auth) => {
      const {
        h,
        groups: found,
        named,
      } = await readGroups(c, auth, { ...queryOf(p), groupedTypes: p.grouped_types }, p);
      if (found.length) {
        const ids = found.flatMap((g) => [g.pageMinId, g.pageMaxId]).sort();
        setLinkHeader(c, [ids[ids.length - 1], ids[0]]);
      }
      return c.json(
        renderNotificationGroups(renderContext(c, h.viewerId), found, named, {
          partial: p.expand_accounts === "partial_avatars",
          paged: true,
        }),
      );
    },
  });

  for (const version of ["v1", "v2"] as const)
    route(app, {
      method: "get",
      path: `/api/${version}/notifications/unread_count`,
      summary:
        version === "v1"
          ? "How many notifications are newer than the notifications marker (capped at limit)"
          : "How many notification groups are newer than the notifications marker (capped at limit)",
      tags: ["Notifications"],
      auth: "user",
      scopes: ["read:notifications"],
      params: z.object({
        limit: intParam()
          .optional()
          .transform((n) => (n === undefined || n < 1 ? 100 : Math.min(n, 1000))),
        ...listing,
      }),
      response: z.object({ count: z.number().int() }),
      handler: async (c, p, auth) =>
        c.json({
          count: await groups.unreadCount(
            db(c.env),
            auth.account.id,
            {
              ...queryOf(p),
              groupedTypes: version === "v2" ? (p.grouped_types ?? groups.GROUPABLE_TYPES) : undefined,
            },
            p.limit,
          ),
        }),
    });

  route(app, {
    method: "get",
    path: "/api/v2/notifications/policy",
    summary: "The notification policy (Mastodon 4.3)",
    tags: ["Notifications"],
    auth: "user",
    scopes: ["read:notifications"],
    response: NotificationPolicySchema,
    handler: async (c, _p, auth) =>
      c.json(renderPolicy(await policies.policyWithSummary(db(c.env), auth.account.id)).v2),
  });

  route(app, {
    method: "patch",
    path: "/api/v2/notifications/policy",
    summary: "Change the notification policy: each of for_* is accept, filter or drop",
    tags: ["Notifications"],
    auth: "user",
    scopes: ["write:notifications"],
    params: z.object(
      Object.fromEntries(policies.POLICY_KEYS.map((k) => [k, policyValue])) as Record<
        policies.PolicyKey,
        typeof policyValue
      >,
    ),
    response: NotificationPolicySchema,
    handler: async (c, p, auth) => {
      await policies.updatePolicy(db(c.env), auth.account.id, p);
      return c.json(renderPolicy(await policies.policyWithSummary(db(c.env), auth.account.id)).v2);
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/notifications/policy",
    summary: "The notification policy, v1 shape (Mastodon 4.2)",
    tags: ["Notifications"],
    auth: "user",
    scopes: ["read:notifications"],
    response: NotificationPolicyV1Schema,
    handler: async (c, _p, auth) =>
      c.json(renderPolicy(await policies.policyWithSummary(db(c.env), auth.account.id)).v1),
  });

  route(app, {
    method: "put",
    path: "/api/v1/notifications/policy",
    summary: "Change the notification policy, v1 shape: each filter_* true filters, false accepts",
    tags: ["Notifications"],
    auth: "user",
    scopes: ["write:notifications"],
    params: z.object({
      filter_not_following: boolParam().optional(),
      filter_not_followers: boolParam().optional(),
      filter_new_accounts: boolParam().optional(),
      filter_private_mentions: boolParam().optional(),
    }),
    response: NotificationPolicyV1Schema,
    handler: async (c, p, auth) => {
      const v = (b: boolean | undefined) => (b === undefined ? undefined : b ? "filter" : "accept");
      await policies.updatePolicy(db(c.env), auth.account.id, {
        for_not_following: v(p.filter_not_following),
        for_not_followers: v(p.filter_not_followers),
        for_new_accounts: v(p.filter_new_accounts),
        for_private_mentions: v(p.filter_private_mentions),
      });
      return c.json(renderPolicy(await policies.policyWithSummary(db(c.env), auth.account.id)).v1);
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/notifications/requests",
    summary: "Senders whose notifications were filtered, newest first",
    tags: ["Notifications"],
    auth: "user",
    scopes: ["read:notifications"],
    params: z.object(pageParams(40)),
    response: z.array(NotificationRequestSchema),
    handler: async (c, p, auth) => {
      const { rows, ...named } = await policies.requestPage(db(c.env), auth.account.id, p);
      setLinkHeader(
        c,
        rows.map((r) => r.id),
      );
      return c.json(renderNotificationRequests(renderContext(c, auth.account.id), rows, named));
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/notifications/requests/merged",
    summary: "Whether accepted requests' notifications are back in the list (always at once here)",
    tags: ["Notifications"],
    auth: "user",
    scopes: ["read:notifications"],
    response: z.object({ merged: z.boolean() }),
    handler: async (c) => c.json({ merged: true }),
  });

  route(app, {
    method: "get",
    path: "/api/v1/notifications/requests/:id",
    summary: "A notification request",
    tags: ["Notifications"],
    auth: "user",
    scopes: ["read:notifications"],
    params: z.object({ id: z.string() }),
    response: NotificationRequestSchema,
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const row = await policies.ownRequest(d, auth.account.id, p.id);
      const [rendered] = renderNotificationRequests(
        renderContext(c, auth.account.id),
        [row],
        await policies.requestsNamed(d, auth.account.id, [row]),
      );
      if (!rendered) throw notFound();
      return c.json(rendered);
    },
  });

  for (const action of ["accept", "dismiss"] as const) {
    const act = action === "accept" ? policies.acceptRequests : policies.dismissRequests;
    route(app, {
      method: "post",
      path: `/api/v1/notifications/requests/:id/${action}`,
      summary:
        action === "accept"
          ? "Accept a request: the sender's notifications come back, and are not filtered again"
          : "Dismiss a request: its filtered notifications are deleted",
      tags: ["Notifications"],
      auth: "user",
      scopes: ["write:notifications"],
      params: z.object({ id: z.string() }),
      response: z.object({}),
      handler: async (c, p, auth) => {
        const d = db(c.env);
        await act(d, auth.account.id, [await policies.ownRequest(d, auth.account.id, p.id)]);
        return c.json({});
      },
    });
    route(app, {
      method: "post",
      path: `/api/v1/notifications/requests/${action}`,
      summary: `${action === "accept" ? "Accept" : "Dismiss"} several requests (id[]; others' ids are ignored)`,
      tags: ["Notifications"],
      auth: "user",
      scopes: ["write:notifications"],
      params: z.object({ id: arrayParam(z.string(), 100) }),
      response: z.object({}),
      handler: async (c, p, auth) => {
        const d = db(c.env);
        await act(d, auth.account.id, await policies.ownRequests(d, auth.account.id, p.id));
        return c.json({});
      },
    });
  }

  route(app, {
    method: "get",
    path: "/api/v2/notifications/:group_key",
    summary: "One notification group",
    tags: ["Notifications"],
    auth: "user",
    scopes: ["read:notifications"],
    params: z.object({ group_key: z.string().max(200) }),
    response: GroupedNotificationsResultsSchema,
    authInQuery: true,
    handler: async (c, p, auth) => {
      const { h, groups: found, named } = await readGroups(c, auth, { groupKey: p.group_key }, { limit: 1 });
      if (found.length === 0) throw notFound();
      return c.json(
        renderNotificationGroups(renderContext(c, h.viewerId), found, named, { partial: false, paged: false }),
      );
    },
  });

  route(app, {
    method: "get",
    path: "/api/v2/notifications/:group_key/accounts",
    summary: "The accounts of a notification group, newest first (at most 80)",
    tags: ["Notifications"],
    auth: "user",
    scopes: ["read:notifications"],
    params: z.object({ group_key: z.string().max(200) }),
    response: z.array(AccountSchema),
    handler: async (c, p, auth) => accountsOf(c, auth.account.id, p.group_key),
  });

  route(app, {
    method: "post",
    path: "/api/v2/notifications/:group_key/dismiss",
    summary: "Dismiss a notification group",
    tags: ["Notifications"],
    auth: "user",
    scopes: ["write:notifications"],
    params: z.object({ group_key: z.string().max(200) }),
    response: z.object({}),
    handler: async (c, p, auth) => {
      await groups.dismissGroup(db(c.env), auth.account.id, p.group_key);
      return c.json({});
    },
  });
}

/**
 * A page of groups in two statements: the window, read with the token, then the groups the Worker picked from it
 * with everything they show (services/notification-groups.ts).
 */
async function readGroups(c: Ctx, auth: Auth | null, q: groups.GroupQuery, page: Page) {
  const w = groups.groupedWindow(q, page);
  const first = await readPage(
    c,
    { mode: "user", scopes: ["read:notifications"], auth },
    { page: () => sql`SELECT NULL WHERE 0`, parts: [w.part] },
  );
  const picked = groups.pickGroups(first, w);
  if (!picked) return { h: first, ...groups.groupsRead(first) };
  const read = groups.groupedPage(q, picked);
  const h = await hydrate(db(c.env), read.statusIds, first.viewerId, { ctes: read.ctes, parts: read.parts });
  return { h, ...groups.groupsRead(h) };
}

async function accountsOf(c: Ctx, me: string, key: string) {
  const d = db(c.env);
  const ids = await groups.groupAccountIds(d, me, key);
  const people = await accountsById(d, ids);
  const ctx = renderContext(c, me);
  return c.json(ids.flatMap((id) => (people.has(id) ? [renderAccount(ctx, people.get(id)!)] : [])));
}
