/** Registration, the user's own account, and reading any account. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { and, count, eq } from "drizzle-orm";
import type { AppEnv } from "../app";
import { config } from "../env";
import { db } from "../db/client";
import { followRequests, notifications, participations } from "../db/schema";
import { ApiError, forbidden, notFound } from "../http/errors";
import { arrayParam, boolParam, fileParam } from "../http/params";
import { route, type Ctx } from "../http/route";
import { baseUrl, hostOf, renderContext } from "../http/urls";
import { renderAccount } from "../render/account";
import { renderToken } from "../render/oauth";
import { AccountSchema } from "../schemas/account";
import { RegistrationPendingSchema, TokenSchema } from "../schemas/oauth";
import {
  confirmationMail,
  fieldErrors,
  findAccount,
  register,
  renderFields,
  saveCredentials,
  type AccountRow,
  type CredentialsUpdate,
  type UserRow,
} from "../services/accounts";
import { verifyCaptcha } from "../services/captcha";
import { mailer } from "../services/mailer";
import { isStoredKey, storeImage } from "../services/media";
import { loadRelationships } from "../services/relationships";
import { plainTextToHtml } from "../content/text";

/** The settings store is opaque to the server, but bounded: 64 KB of JSON per frontend, 16 frontends. */
export const SETTINGS_STORE_FRONTEND_BYTES = 64 * 1024;
export const SETTINGS_STORE_FRONTENDS = 16;

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
      email: z.string(),
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
    }),
    response: z.union([TokenSchema, RegistrationPendingSchema]),
    rateLimit: { name: "registration" },
    handler: async (c, p, auth) => {
      // Only an app acting for nobody registers users: a signed-in user has an account already.
      if (!auth.app || auth.account) throw forbidden("Invalid credentials");
      const cfg = config(c.env);
      const d = db(c.env);
      if (!p.agreement) throw fieldErrors({ agreement: ["must be accepted"] });
      if (cfg.captcha !== "none") await verifyCaptcha(c.env, p.captcha_token, p.captcha_solution, p.captcha_answer_data);
      const base = baseUrl(c);
      const made = await register(d, cfg, base, auth.app, { ...p, language: p.language ?? acceptLanguage(c) });
      if (made.confirmationToken) {
        const mail = confirmationMail(cfg, base, made.account, made.user.email, made.confirmationToken);
        c.executionCtx.waitUntil(mailer(c.env, hostOf(c)).send(mail));
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
      const update = credentialsUpdate(c, p, auth.user);
      const cfg = config(c.env);
      const prefix = `accounts/${auth.account.id.toLowerCase()}`;
      const images = [
        ["avatar", p.avatar, cfg.avatarUploadLimit],
        ["header", p.header, cfg.bannerUploadLimit],
        ["background", p.pleroma_background_image, cfg.backgroundUploadLimit],
      ] as const;
      const replaced: string[] = [];
      for (const [column, value, limit] of images) {
        if (value === undefined) continue;
        update.account[column] = value === "" ? null : (await storeImage(c.env.MEDIA, prefix, value, limit)).key;
        const old = auth.account[column];
        if (isStoredKey(old)) replaced.push(old);
      }
      const saved = await saveCredentials(db(c.env), auth.account.id, update);
      // The old files go once the new profile is saved; nobody waits for it.
      if (replaced.length) c.executionCtx.waitUntil(c.env.MEDIA.delete(replaced));
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
        p.with_relationships && viewerId ? (await loadRelationships(d, viewerId, [found.account.id])).get(found.account.id) : undefined;
      return c.json(renderAccount(renderContext(c, viewerId), found, { relationship }));
    },
  });
}

/** The owner's view: source, settings store and owner counters. */
async function renderOwn(c: Ctx, account: AccountRow, user: UserRow) {
  const d = db(c.env);
  const [requests, unread, unseen] = await d.batch([
    d.select({ n: count() }).from(followRequests).where(eq(followRequests.targetAccountId, account.id)),
    d.select({ n: count() }).from(participations).where(and(eq(participations.accountId, account.id), eq(participations.unread, true))),
    d.select({ n: count() }).from(notifications).where(and(eq(notifications.accountId, account.id), eq(notifications.isSeen, false))),
  ]);
  return renderAccount(
    renderContext(c, account.id),
    { account, user },
    {
      source: true,
      settingsStore: true,
      followRequestsCount: requests[0]?.n ?? 0,
      unreadConversationCount: unread[0]?.n ?? 0,
      unreadNotificationsCount: unseen[0]?.n ?? 0,
    },
  );
}

function acceptLanguage(c: Ctx): string | undefined {
  const header = c.req.header("accept-language");
  return header?.split(",")[0]?.split(";")[0]?.trim() || undefined;
}

/** The column changes an update asks for, after Pleroma's length and count checks (413 when exceeded). */
function credentialsUpdate(c: Ctx, p: z.infer<typeof updateParams>, user: UserRow): CredentialsUpdate {
  const cfg = config(c.env);
  const tooLarge = (message: string) => new ApiError(413, message);
  const account: CredentialsUpdate["account"] = {};
  const u: CredentialsUpdate["user"] = {};
  if (p.display_name !== undefined) {
    if (p.display_name.length > cfg.maxNameLength) throw tooLarge("Name is too long");
    account.displayName = p.display_name;
  }
  if (p.note !== undefined) {
    if (p.note.length > cfg.maxBioLength) throw tooLarge("Bio is too long");
    account.note = plainTextToHtml(p.note);
    u.noteSource = p.note;
  }
  if (p.fields_attributes !== undefined) {
    const fields = p.fields_attributes.filter((f) => f.name !== "" || f.value !== "");
    if (fields.length > cfg.fieldsLimits.max_fields) throw tooLarge("Too many field entries");
    if (fields.some((f) => f.name.length > cfg.fieldsLimits.name_length || f.value.length > cfg.fieldsLimits.value_length)) {
      throw tooLarge("One or more field entries are too long");
    }
    account.fields = renderFields(fields);
    u.fieldsSource = fields;
  }
  const flags = [
    ["locked", "locked"],
    ["discoverable", "discoverable"],
    ["hide_followers", "hideFollowers"],
    ["hide_follows", "hideFollows"],
    ["hide_followers_count", "hideFollowersCount"],
    ["hide_follows_count", "hideFollowsCount"],
    ["hide_favorites", "hideFavorites"],
    ["accepts_chat_messages", "acceptsChatMessages"],
  ] as const;
  for (const [param, column] of flags) if (p[param] !== undefined) account[column] = p[param];
  const userFlags = [
    ["no_rich_text", "noRichText"],
    ["show_role", "showRole"],
    ["skip_thread_containment", "skipThreadContainment"],
    ["allow_following_move", "allowFollowingMove"],
  ] as const;
  for (const [param, column] of userFlags) if (p[param] !== undefined) u[column] = p[param];
  if (p.bot !== undefined) account.actorType = p.bot ? "Service" : "Person";
  if (p.actor_type !== undefined) account.actorType = p.actor_type;
  if (p.also_known_as !== undefined) account.alsoKnownAs = p.also_known_as;
  const privacy = p.source?.privacy ?? p.default_scope;
  if (privacy !== undefined) u.defaultScope = privacy;
  if (p.source?.sensitive !== undefined) u.sensitive = p.source.sensitive;
  if (p.source?.language !== undefined) u.postingLanguage = p.source.language || null;
  if (p.language !== undefined) u.locale = p.language;
  if (p.pleroma_settings_store !== undefined) {
    for (const [frontend, value] of Object.entries(p.pleroma_settings_store)) {
      if (new TextEncoder().encode(JSON.stringify(value) ?? "").byteLength > SETTINGS_STORE_FRONTEND_BYTES) {
        throw new ApiError(400, `Settings store entry too large: ${frontend.slice(0, 100)} holds more than ${SETTINGS_STORE_FRONTEND_BYTES / 1024} KB`);
      }
    }
    // Each frontend's entry is replaced whole; other frontends keep theirs.
    const store = { ...user.settingsStore, ...p.pleroma_settings_store };
    if (Object.keys(store).length > SETTINGS_STORE_FRONTENDS) throw new ApiError(400, `Settings store holds at most ${SETTINGS_STORE_FRONTENDS} frontends`);
    u.settingsStore = store;
  }
  return { account, user: u };
}
