/**
 * Domain rules for admins (issue 48): Mastodon's admin API for domain blocks and allows (what FediBlockHole and
 * other tools push through), and importing and exporting shared blocklists, with a preview. All over the federation
 * policies admin-fe's MRF page edits (services/domain-rules.ts). Admins only; every change is logged with its source.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { db, now, type DB } from "../../db/client";
import type { UserAuth } from "../../http/auth";
import { route } from "../../http/route";
import { boolParam, intParam, optionalString } from "../../http/params";
import { pageParams, setLinkHeader } from "../../http/pagination";
import { ApiError, notFound, unprocessable } from "../../lib/errors";
import { logEntry } from "../../services/moderation-log";
import { refreshSettings } from "../../services/instance-settings";
import {
  allowStatements,
  blockStatements,
  checkBlock,
  disallowStatements,
  listAllows,
  listBlocks,
  normalizeDomain,
  planImport,
  SEVERITIES,
  stored,
  unblockStatements,
  type DomainBlock,
  type StoredBlock,
} from "../../services/domain-rules";
import { FORMATS, parseList, serializeList } from "../../services/blocklist-formats";
import { renderDomainAllow, renderDomainBlock } from "../../render/domain-rule";
import { DomainAllowSchema, DomainBlockSchema, ImportPlanSchema } from "../../schemas/admin-domains";
import { actorOf, ADMIN_TAG } from "./common";
import {
  createSubscription,
  deleteSubscription,
  fetchList,
  listSubscriptions,
  subscriptionById,
  updateSubscription,
  type Subscription,
} from "../../services/domain-subscriptions";

const admin = { tags: ADMIN_TAG, auth: "user", privilege: "superuser" } as const;
const readBlocks = { ...admin, scopes: ["admin:read:domain_blocks"] };
const writeBlocks = { ...admin, scopes: ["admin:write:domain_blocks"] };
const readAllows = { ...admin, scopes: ["admin:read:domain_allows"] };
const writeAllows = { ...admin, scopes: ["admin:write:domain_allows"] };

const blockFields = {
  severity: z.enum(SEVERITIES).optional(),
  reject_media: boolParam().optional(),
  reject_reports: boolParam().optional(),
  private_comment: optionalString(),
  public_comment: optionalString(),
  obfuscate: boolParam().optional(),
};

const domainParam = (given: string) => {
  const d = normalizeDomain(given);
  if (!d) throw unprocessable(`"${given.slice(0, 100)}" is not a domain`);
  return d;
};

async function apply(
  c: Parameters<Parameters<typeof route>[1]["handler"]>[0],
  d: DB,
  auth: UserAuth,
  stmts: D1PreparedStatement[],
  action: string,
  data: Record<string, unknown>,
  message: string,
) {
  await d.$client.batch([...stmts, logEntry(d, actorOf(auth), action, data, message, now())]);
  // This isolate sees the change at once; others within the settings' TTL.
  await refreshSettings(c.env, true);
}

async function blockOf(d: DB, id: string): Promise<StoredBlock> {
  const domain = normalizeDomain(id);
  const [b] = domain ? await listBlocks(d, { domain, limit: 1 }) : [];
  if (!b) throw notFound();
  return b;
}

export function registerAdminDomainRuleRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/admin/domain_blocks",
    summary: "Domain blocks, in domain order (Mastodon's admin API; the id is the domain)",
    ...readBlocks,
    params: z.object(pageParams(100)),
    response: z.array(DomainBlockSchema),
    handler: async (c, p) => {
      const blocks = await listBlocks(db(c.env), { after: p.max_id, limit: p.limit });
      setLinkHeader(c, blocks.length === p.limit ? [blocks[0]!.domain, blocks.at(-1)!.domain] : []);
      return c.json(blocks.map(renderDomainBlock));
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/admin/domain_blocks/:id",
    summary: "A domain block",
    ...readBlocks,
    params: z.object({ id: z.string() }),
    response: DomainBlockSchema,
    handler: async (c, p) => c.json(renderDomainBlock(await blockOf(db(c.env), p.id))),
  });

  route(app, {
    method: "post",
    path: "/api/v1/admin/domain_blocks",
    summary: "Block a domain (a suspension severs follows both ways and stops deliveries at once)",
    ...writeBlocks,
    params: z.object({ domain: z.string().min(1).max(300), ...blockFields }),
    response: DomainBlockSchema,
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const domain = domainParam(p.domain);
      const [existing] = await listBlocks(d, { domain, limit: 1 });
      if (existing)
        throw new ApiError(422, "Validation failed: Domain is already blocked", {
          existing_domain_block: renderDomainBlock(existing),
        });
      const b: DomainBlock = {
        domain,
        severity: p.severity ?? "silence",
        rejectMedia: p.reject_media ?? false,
        rejectReports: p.reject_reports ?? false,
        publicComment: p.public_comment ?? "",
        privateComment: p.private_comment ?? "",
        obfuscate: p.obfuscate ?? false,
      };
      checkBlock(b);
      const t = now();
      await apply(
        c,
        d,
        auth,
        blockStatements(d, [b], "hand", t),
        "domain_block",
        { domain, severity: b.severity, source: "hand" },
        `@${auth.account.username} blocked ${domain} (${b.severity})`,
      );
      return c.json(renderDomainBlock((await listBlocks(d, { domain, limit: 1 }))[0]!));
    },
  });

  route(app, {
    method: "put",
    path: "/api/v1/admin/domain_blocks/:id",
    summary: "Change a domain block",
    ...writeBlocks,
    params: z.object({ id: z.string(), ...blockFields }),
    response: DomainBlockSchema,
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const before = await blockOf(d, p.id);
      const b: DomainBlock = {
        domain: before.domain,
        severity: p.severity ?? before.severity,
        rejectMedia: p.reject_media ?? before.rejectMedia,
        rejectReports: p.reject_reports ?? before.rejectReports,
        publicComment: p.public_comment ?? before.publicComment,
        privateComment: p.private_comment ?? before.privateComment,
        obfuscate: p.obfuscate ?? before.obfuscate,
      };
      checkBlock(b);
      await apply(
        c,
        d,
        auth,
        blockStatements(d, [b], "hand", now()),
        "domain_block",
        { domain: b.domain, severity: b.severity, source: "hand" },
        `@${auth.account.username} changed the block of ${b.domain} (${b.severity})`,
      );
      return c.json(renderDomainBlock((await listBlocks(d, { domain: b.domain, limit: 1 }))[0]!));
    },
  });

  route(app, {
    method: "delete",
    path: "/api/v1/admin/domain_blocks/:id",
    summary: "Lift a domain block",
    ...writeBlocks,
    params: z.object({ id: z.string() }),
    response: z.object({}),
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const b = await blockOf(d, p.id);
      await apply(
        c,
        d,
        auth,
        unblockStatements(d, b.domain),
        "domain_unblock",
        { domain: b.domain, source: "hand" },
        `@${auth.account.username} lifted the block of ${b.domain}`,
      );
      return c.json({});
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/admin/domain_allows",
    summary: "Domains allowed (allow-list federation: with any, only they federate)",
    ...readAllows,
    params: z.object(pageParams(100)),
    response: z.array(DomainAllowSchema),
    handler: async (c, p) => {
      const allows = await listAllows(db(c.env), { after: p.max_id, limit: p.limit });
      setLinkHeader(c, allows.length === p.limit ? [allows[0]!.domain, allows.at(-1)!.domain] : []);
      return c.json(allows.map(renderDomainAllow));
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/admin/domain_allows/:id",
    summary: "A domain allowed",
    ...readAllows,
    params: z.object({ id: z.string() }),
    response: DomainAllowSchema,
    handler: async (c, p) => {
      const domain = normalizeDomain(p.id);
      const [a] = domain ? await listAllows(db(c.env), { domain, limit: 1 }) : [];
      if (!a) throw notFound();
      return c.json(renderDomainAllow(a));
    },
  });

  route(app, {
    method: "post",
    path: "/api/v1/admin/domain_allows",
    summary: "Allow a domain (the first one turns allow-list federation on)",
    ...writeAllows,
    params: z.object({ domain: z.string().min(1).max(300) }),
    response: DomainAllowSchema,
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const domain = domainParam(p.domain);
      await apply(
        c,
        d,
        auth,
        allowStatements(d, domain, "hand", now()),
        "domain_allow",
        { domain, source: "hand" },
        `@${auth.account.username} allowed ${domain}`,
      );
      return c.json(renderDomainAllow((await listAllows(d, { domain, limit: 1 }))[0]!));
    },
  });

  route(app, {
    method: "delete",
    path: "/api/v1/admin/domain_allows/:id",
    summary: "Take a domain off the allow-list",
    ...writeAllows,
    params: z.object({ id: z.string() }),
    response: z.object({}),
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const domain = normalizeDomain(p.id);
      const [a] = domain ? await listAllows(d, { domain, limit: 1 }) : [];
      if (!a) throw notFound();
      await apply(
        c,
        d,
        auth,
        disallowStatements(d, a.domain),
        "domain_disallow",
        { domain: a.domain, source: "hand" },
        `@${auth.account.username} took ${a.domain} off the allow-list`,
      );
      return c.json({});
    },
  });

  route(app, {
    method: "post",
    path: "/api/v1/pleroma/admin/domain_blocks/import",
    summary:
      "Import a blocklist (Mastodon CSV, GoToSocial JSON or a plain list): a preview unless `apply`; `replace` lifts the earlier imports' rules the list no longer has",
    ...writeBlocks,
    bodyLimit: () => ({ bytes: 2_100_000, message: "The list is larger than 2 MB" }),
    params: z.object({
      list: z.string().min(1),
      format: z.enum(FORMATS).optional(),
      apply: boolParam().optional(),
      replace: boolParam().optional(),
    }),
    response: ImportPlanSchema,
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const blocks = parseList(p.list, p.format ?? "mastodon_csv");
      const plan = await planImport(d, blocks, "import", p.replace ?? false);
      if (p.apply) {
        const apply_ = [...plan.added, ...plan.changed.map((x) => x.after)];
        const lift = plan.removed.map((b) => b.domain);
        await apply(
          c,
          d,
          auth,
          blockStatements(d, apply_, "import", now(), lift),
          "domain_blocks_import",
          { source: "import", added: plan.added.length, changed: plan.changed.length, removed: lift.length },
          `@${auth.account.username} imported a blocklist: ${plan.added.length} added, ${plan.changed.length} changed, ${lift.length} lifted`,
        );
      }
      return c.json({
        applied: p.apply ?? false,
        added: (await Promise.all(plan.added.map((b) => stored(b, now(), "import")))).map(renderDomainBlock),
        changed: await Promise.all(
          plan.changed.map(async (x) => ({
            before: renderDomainBlock(x.before),
            after: renderDomainBlock(await stored(x.after, x.before.createdAt, "import")),
          })),
        ),
        unchanged: plan.unchanged,
        kept_by_hand: plan.keptByHand,
        removed: plan.removed.map(renderDomainBlock),
        severs: plan.severs,
      });
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/pleroma/admin/domain_blocks/export",
    summary: "The domain blocks as a list to share (Mastodon CSV by default; no private comments)",
    ...readBlocks,
    params: z.object({ format: z.enum(FORMATS).optional() }),
    produces: "text/csv",
    handler: async (c, p) => {
      const { body, type } = serializeList(
        await listBlocks(db(c.env), { limit: 1_000_000 }),
        p.format ?? "mastodon_csv",
      );
      return c.body(body, 200, { "content-type": type });
    },
  });
}

const SubscriptionSchema = z
  .object({
    id: z.string(),
    priority: z.number().int(),
    title: z.string(),
    permission_type: z.enum(["block", "allow"]),
    as_draft: z.boolean(),
    remove_retracted: z.boolean(),
    created_by: z.string(),
    created_at: z.string().datetime(),
    uri: z.string(),
    content_type: z.string(),
    fetched_at: z.string().datetime().nullable(),
    successfully_fetched_at: z.string().datetime().nullable(),
    count: z.number().int(),
    error: z.string().nullable(),
  })
  .openapi("DomainPermissionSubscription");

const iso = (t: number | null) => (t ? new Date(t).toISOString() : null);
const renderSubscription = (s: Subscription) => ({
  id: s.id,
  priority: s.priority,
  title: s.title,
  permission_type: s.permissionType,
  as_draft: s.asDraft,
  remove_retracted: s.removeRetracted,
  created_by: s.createdBy,
  created_at: new Date(s.createdAt).toISOString(),
  uri: s.uri,
  content_type: s.contentType,
  fetched_at: iso(s.fetchedAt),
  successfully_fetched_at: iso(s.successfullyFetchedAt),
  count: s.count,
  error: s.error,
});

async function subscriptionOf(d: DB, id: string) {
  const s = await subscriptionById(d, id);
  if (!s) throw notFound();
  return s;
}

const subscriptionFields = {
  title: optionalString(),
  priority: intParam().optional(),
  as_draft: boolParam().optional(),
  remove_retracted: boolParam().optional(),
};

/** GoToSocial's domain permission subscriptions API (`/api/v1/admin/domain_permission_subscriptions`). */
export function registerAdminDomainSubscriptionRoutes(app: OpenAPIHono<AppEnv>) {
  const base = "/api/v1/admin/domain_permission_subscriptions";
  route(app, {
    method: "get",
    path: base,
    summary: "Subscribed blocklists and allow-lists, by priority",
    ...readBlocks,
    response: z.array(SubscriptionSchema),
    handler: async (c) => c.json((await listSubscriptions(db(c.env))).map(renderSubscription)),
  });
  route(app, {
    method: "post",
    path: base,
    summary: "Subscribe to a list (a draft by default: fetched daily, counted, not applied)",
    ...writeBlocks,
    params: z.object({
      uri: z.string().min(1).max(2048),
      content_type: z.string(),
      permission_type: z.enum(["block", "allow"]),
      ...subscriptionFields,
    }),
    response: SubscriptionSchema,
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const t = now();
      const sub = await createSubscription(
        d,
        {
          uri: p.uri,
          contentType: p.content_type,
          permissionType: p.permission_type,
          priority: p.priority,
          title: p.title,
          asDraft: p.as_draft,
          removeRetracted: p.remove_retracted,
        },
        auth.account.id,
        t,
      );
      await logEntry(
        d,
        actorOf(auth),
        "domain_subscription_create",
        { uri: sub.uri },
        `@${auth.account.username} subscribed to ${sub.uri}`,
        t,
      ).run();
      return c.json(renderSubscription(sub));
    },
  });
  route(app, {
    method: "get",
    path: `${base}/:id`,
    summary: "A subscription",
    ...readBlocks,
    params: z.object({ id: z.string() }),
    response: SubscriptionSchema,
    handler: async (c, p) => c.json(renderSubscription(await subscriptionOf(db(c.env), p.id))),
  });
  route(app, {
    method: "patch",
    path: `${base}/:id`,
    summary: "Change a subscription (turning drafting off applies it at the next hourly run)",
    ...writeBlocks,
    params: z.object({ id: z.string(), ...subscriptionFields }),
    response: SubscriptionSchema,
    handler: async (c, p) => {
      const d = db(c.env);
      await subscriptionOf(d, p.id);
      const row = await updateSubscription(d, p.id, {
        title: p.title,
        priority: p.priority,
        asDraft: p.as_draft,
        removeRetracted: p.remove_retracted,
      });
      return c.json(renderSubscription(row!));
    },
  });
  route(app, {
    method: "delete",
    path: `${base}/:id`,
    summary: "Unsubscribe (its rules stay, as the import's, unless remove_children)",
    ...writeBlocks,
    params: z.object({ id: z.string(), remove_children: boolParam().optional() }),
    response: SubscriptionSchema,
    handler: async (c, p) => {
      const d = db(c.env);
      const sub = await subscriptionOf(d, p.id);
      await deleteSubscription(d, sub, p.remove_children ?? false);
      await refreshSettings(c.env, true);
      return c.json(renderSubscription(sub));
    },
  });
  route(app, {
    method: "post",
    path: `${base}/:id/test`,
    summary: "Fetch the list now and show what it holds, applying nothing",
    ...writeBlocks,
    params: z.object({ id: z.string() }),
    response: z.union([
      z.array(z.object({ domain: z.string(), public_comment: z.string(), obfuscate: z.boolean() })),
      z.object({ error: z.string() }),
    ]),
    handler: async (c, p) => {
      const sub = await subscriptionOf(db(c.env), p.id);
      try {
        const got = await fetchList(c.env, sub, false);
        return c.json(
          (got?.blocks ?? []).map((b) => ({
            domain: b.domain,
            public_comment: b.publicComment,
            obfuscate: b.obfuscate,
          })),
        );
      } catch (e) {
        return c.json({ error: (e instanceof Error ? e.message : String(e)).slice(0, 500) });
      }
    },
  });
}
