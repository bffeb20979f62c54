/** Registration, the user's own account, and reading any account. */
import { movedTarget } from "../services/move";
import { EMAIL_MAX } from "../lib/email-address";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { config } from "../env";
import { db } from "../db/client";
import { forbidden, notFound } from "../lib/errors";
import { arrayParam, boolParam, fileParam } from "../http/params";
import { after, route, type Ctx } from "../http/route";
import { refreshIfStale } from "../services/remote-accounts";
import { visitorLanguage } from "../http/browser";
import { baseUrl, hostOf, renderContext } from "../http/urls";
import { renderAccount } from "../render/account";
import { renderToken } from "../render/oauth";
import { AccountSchema } from "../schemas/account";
import { RegistrationPendingSchema, TokenSchema } from "../schemas/oauth";
import { findAccount, ownerCounters, type AccountRow, type UserRow } from "../services/accounts";
import { updateCredentials } from "../services/update-credentials";
import { signUp } from "../services/sign-up";
import { loadRelationships } from "../services/relationships";

const VISIBILITY = z.enum(["public", "unlisted", "private", "direct", "local"]);
const ACTOR_TYPES = z.enum(["Person", "Service", "Group", "Application"]);
const imageParam = () => z.union([fileParam(), z.literal("")]).optional();
const fieldParam = z.object({ name: z.string().optional().default(""), value: z.string().optional().default("") });

const updateParams = z.object({
  display_name: z.string().optional(),
  note: z.string().optional(),
  avatar: imageParam(),
  header: imageParam(),
  pleroma_background_image: imageParam(),
  locked: boolParam().optional(),
  bot: boolParam().optional(),
  discoverable: boolParam().optional(),
  actor_type: ACTOR_TYPES.optional(),
  source: z
    .object({
      privacy: VISIBILITY.optional(),
      sensitive: boolParam().optional(),
      language: z.string().max(16).optional(),
      quote_policy: z.string().max(32).optional(),
    })
    .optional(),
  fields_attributes: arrayParam(fieldParam).optional(),
  no_rich_text: boolParam().optional(),
  hide_followers: boolParam().optional(),
  hide_follows: boolParam().optional(),
  hide_followers_count: boolParam().optional(),
  hide_follows_count: boolParam().optional(),
  hide_favorites: boolParam().optional(),
  show_role: boolParam().optional(),
  default_scope: VISIBILITY.optional(),
  pleroma_settings_store: z.record(z.string(), z.unknown()).optional(),
  skip_thread_containment: boolParam().optional(),
  allow_following_move: boolParam().optional(),
  also_known_as: arrayParam(z.url()).optional(),
  accepts_chat_messages: boolParam().optional(),
  language: z.string().max(16).optional(),
});

export function registerAccountRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "post",
    path: "/api/v1/accounts",
    summary: "Register an account (with an app token)",
    tags: ["Accounts"],
    auth: "required",
    params: z.object({
      username: z.string(),
      email: z.string().max(EMAIL_MAX),
      password: z.string(),
      agreement: boolParam(),
      locale: z.string().max(16).optional(),
      fullname: z.string().optional(),
      bio: z.string().optional(),
      token: z.string().optional(),
      captcha_solution: z.string().optional(),
      captcha_token: z.string().optional(),
      captcha_answer_data: z.string().optional(),
      language: z.string().max(16).optional(),
      reason: z.string().max(10_000).optional(),
    }),
    response: z.union([TokenSchema, RegistrationPendingSchema]),
    rateLimit: { name: "registration" },
    handler: async (c, p, auth) => {
      // Only an app acting for nobody registers users: a signed-in user has an account already.
      if (!auth.app || auth.account) throw forbidden("Invalid credentials");
      const { made, effects } = await signUp(c.env, db(c.env), config(c.env), baseUrl(c), auth.app, {
        ...p,
        language: p.language ?? visitorLanguage(c),
      });
      after(c, effects);
      if (made.user.approvalPending) {
        return c.json({
          message: "You have been registered. You'll be able to log in once your account is approved.",
          identifier: "awaiting_approval",
        });
      }
      if (made.confirmationToken) {
        return c.json({
          message: "You have been registered. Please check your email for further instructions.",
          identifier: "missing_confirmed_email",
        });
      }
      return c.json(renderToken(made.token!, made.account.uri));
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/accounts/verify_credentials",
    summary: "The user's own account, with source and settings",
    tags: ["Accounts"],
    auth: "user",
    scopes: ["read:accounts"],
    response: AccountSchema,
    handler: async (c, _p, auth) => c.json(await renderOwn(c, auth.account, auth.user)),
  });

  route(app, {
    method: "patch",
    path: "/api/v1/accounts/update_credentials",
    summary: "Change the user's profile and settings",
    tags: ["Accounts"],
    auth: "user",
    scopes: ["write:accounts"],
    params: updateParams,
    response: AccountSchema,
    handler: async (c, p, auth) => {
      const { saved, effects } = await updateCredentials(
        db(c.env),
        config(c.env),
        { bucket: c.env.MEDIA, images: c.env.IMAGES },
        auth,
        p,
      );
      after(c, effects);
      return c.json(await renderOwn(c, saved.account, saved.user!));
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/accounts/:id",
    summary: "An account, by id or nickname",
    tags: ["Accounts"],
    auth: "optional",
    scopes: ["read:accounts"],
    params: z.object({ id: z.string(), with_relationships: boolParam().optional() }),
    response: AccountSchema,
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const found = await findAccount(d, p.id, hostOf(c));
      if (!found || (found.account.deactivated && auth?.account?.id !== found.account.id)) {
        throw notFound("Can't find user");
      }
      const viewerId = auth?.account?.id ?? null;
      const relationship =
        p.with_relationships && viewerId
          ? (await loadRelationships(d, viewerId, [found.account.id])).get(found.account.id)
          : undefined;
      const ctx = renderContext(c, viewerId);
      const target = await movedTarget(d, found.account);
      // A remote account not fetched for a day is refreshed after this answer (its counts as its server reports).
      after(c, refreshIfStale(found.account));
      return c.json(renderAccount(ctx, found, { relationship, moved: target ? renderAccount(ctx, target) : null }));
    },
  });
}

/** The owner's view: source, settings store and owner counters. */
async function renderOwn(c: Ctx, account: AccountRow, user: UserRow) {
  const [counters, target] = await Promise.all([ownerCounters(db(c.env), account.id), movedTarget(db(c.env), account)]);
  const ctx = renderContext(c, account.id);
  return renderAccount(
    ctx,
    { account, user },
    { source: true, settingsStore: true, ...counters, moved: target ? renderAccount(ctx, target) : null },
  );
}
