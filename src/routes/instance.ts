/** Instance information (v1 and v2), rules, trends, and the empty-by-design Mastodon endpoints. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { notFound } from "../lib/errors";
import { route } from "../http/route";
import { baseUrl, hostOf } from "../http/urls";
import { intParam, offsetParam } from "../http/params";
import { renderInstance, renderInstanceV2, renderPrivacyPolicy, renderTermsOfService } from "../render/instance";
import { mrfTransparency } from "../services/federation-policies";
import { renderTag } from "../render/tag";
import {
  InstanceSchema,
  InstanceV2Schema,
  PrivacyPolicySchema,
  RuleSchema,
  SuggestionSchema,
  TermsOfServiceSchema,
  TrendTagSchema,
} from "../schemas/instance";
import { datedDocument } from "../services/instance-documents";
import { StatusSchema } from "../schemas/status";
import { peers } from "../services/instance";
import { cachedInstanceStats } from "./instance-stats";
import { vapidKeys } from "../services/instance-keys";
import { trendingTags } from "../services/trends";
import { translationEnabled } from "../services/translation";
import type { Ctx } from "../http/route";

async function instanceV1(c: Ctx) {
  const [stats, vapid] = await Promise.all([cachedInstanceStats(c), vapidKeys(c.env)]);
  return renderInstance(c.env, baseUrl(c), hostOf(c), stats, vapid.publicKey, mrfTransparency(c.env));
}

const trendParams = z.object({
  limit: intParam()
    .optional()
    .transform((n) => (n === undefined || n < 1 ? 10 : Math.min(n, 20))),
  offset: offsetParam().optional(),
});

export function registerInstanceRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/instance",
    summary: "Information about this instance",
    tags: ["Instance"],
    auth: "none",
    response: InstanceSchema,
    handler: async (c) => c.json(await instanceV1(c)),
  });

  route(app, {
    method: "get",
    path: "/api/v2/instance",
    summary: "Information about this instance (Mastodon 4 shape)",
    tags: ["Instance"],
    auth: "none",
    response: InstanceV2Schema,
    handler: async (c) =>
      c.json(renderInstanceV2(await instanceV1(c), hostOf(c), baseUrl(c), translationEnabled(c.env))),
  });

  route(app, {
    method: "get",
    path: "/api/v1/instance/rules",
    summary: "The instance's rules (none are configured)",
    tags: ["Instance"],
    auth: "none",
    response: z.array(RuleSchema),
    handler: (c) => c.json([]),
  });

  // Mastodon's shapes over the instance documents an admin uploads (admin-fe's "terms-of-service", and
  // "privacy-policy"). No terms uploaded: 404, as Mastodon answers when it has none.
  route(app, {
    method: "get",
    path: "/api/v1/instance/terms_of_service",
    summary: "The terms of service (the uploaded instance document)",
    tags: ["Instance"],
    auth: "none",
    response: TermsOfServiceSchema,
    handler: async (c) => {
      const doc = await datedDocument(c.env, "terms-of-service");
      if (!doc) throw notFound("Record not found");
      return c.json(renderTermsOfService(doc));
    },
  });
  // Mastodon always has a policy (its template); without an uploaded one this says so rather than invent one.
  route(app, {
    method: "get",
    path: "/api/v1/instance/privacy_policy",
    summary: "The privacy policy (the uploaded instance document)",
    tags: ["Instance"],
    auth: "none",
    response: PrivacyPolicySchema,
    handler: async (c) => {
      return c.json(renderPrivacyPolicy(await datedDocument(c.env, "privacy-policy")));
    },
  });

  // `/api/v1/trends` is Mastodon 3.0's name for the same list.
  for (const path of ["/api/v1/trends/tags", "/api/v1/trends"]) {
    route(app, {
      method: "get",
      path,
      summary: "Hashtags used by the most accounts in public statuses of the last days",
      tags: ["Trends"],
      auth: "none",
      params: trendParams,
      response: z.array(TrendTagSchema),
      handler: async (c, p) => {
        const tags = await trendingTags(db(c.env), Date.now(), p.limit, p.offset ?? 0);
        return c.json(tags.map((t) => renderTag(baseUrl(c), t)));
      },
    });
  }

  // Trending statuses and links are not computed: well-formed empty answers.
  route(app, {
    method: "get",
    path: "/api/v1/trends/statuses",
    summary: "Trending statuses (not computed: always empty)",
    tags: ["Trends"],
    auth: "none",
    params: trendParams,
    response: z.array(StatusSchema).max(0),
    handler: (c) => c.json([]),
  });

  route(app, {
    method: "get",
    path: "/api/v1/trends/links",
    summary: "Trending links (not computed: always empty)",
    tags: ["Trends"],
    auth: "none",
    params: trendParams,
    response: z.array(z.unknown()).max(0),
    handler: (c) => c.json([]),
  });

  route(app, {
    method: "get",
    path: "/api/v1/instance/peers",
    summary: "Domains this instance knows of",
    tags: ["Instance"],
    auth: "none",
    response: z.array(z.string()),
    handler: async (c) => c.json(await peers(db(c.env))),
  });

  // Accepted so clients that ask get a well-formed empty answer (the spec lists them as unsupported).
  for (const path of ["/api/v1/suggestions", "/api/v1/identity_proofs"]) {
    route(app, {
      method: "get",
      path,
      summary: "Not offered by this server: always empty",
      tags: ["Instance"],
      auth: "none",
      response: z.array(z.unknown()).max(0),
      handler: (c) => c.json([]),
    });
  }

  // Mastodon 3.4's suggestions with their reasons, over the same (empty) list as v1: Soapbox and Elk ask it.
  route(app, {
    method: "get",
    path: "/api/v2/suggestions",
    summary: "Accounts suggested to follow, with why (none are suggested: always empty)",
    tags: ["Instance"],
    auth: "none",
    params: z.object({ limit: z.unknown().optional() }),
    response: z.array(SuggestionSchema).max(0),
    handler: (c) => c.json([]),
  });

  route(app, {
    method: "get",
    path: "/api/v1/featured_tags",
    summary: "Not offered by this server: 404",
    tags: ["Instance"],
    auth: "none",
    handler: () => {
      throw notFound("Not found");
    },
  });
}
