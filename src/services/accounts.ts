/** Accounts and local users: registration, look-up, profile changes, e-mail confirmation. */
import { and, count, desc, eq, isNull, ne, or, sql, type SQL } from "drizzle-orm";
import { notSilenced } from "./visibility";
import type { DB } from "../db/client";
import { mixedBatch, now, readsWhere } from "../db/client";
import { profileUpdateWrites } from "./profile-updates";
import { isId, newId } from "../db/ids";
import {
  accounts,
  credentials,
  followRequests,
  invites,
  notifications,
  participations,
  tokens,
  userColumns,
  users,
  type AccountField,
} from "../db/schema";
import { plainTextToHtml } from "../content/text";
import { ApiError, badRequest, notFound } from "../lib/errors";
import type { FormFile } from "../lib/form-file";
import { hashPassword, randomToken, sha256 } from "../lib/crypto";
import type { Config } from "../env";
import { queueMail } from "./mail-queue";
import { adminEmailsQuery, emailsOf } from "./registration";
import type { AppRow } from "./apps";
import type { Effects } from "./effects";
import { isStoredKey, storeImage } from "./media";
import { buildToken, type IssuedToken } from "./tokens";
import { localEmojisNamed, profileEmojis, shortcodesIn } from "./emoji";

export type AccountRow = typeof accounts.$inferSelect;
/** A user as code outside login and signing sees it: the `userColumns` allowlist, no secrets. */
export type UserRow = { [K in keyof typeof userColumns]: (typeof users.$inferSelect)[K] };
export type { AppRow };

/** An account with its local user row, when it has one. */
export interface AccountWithUser {
  account: AccountRow;
  user: UserRow | null;
}

/** Names that would collide with routes or mislead, as Pleroma reserves them. */
export const RESERVED_NICKNAMES = (
  ".well-known ~ about activities api auth check_password dev friend-requests inbox internal main media nodeinfo " +
  "notice oauth objects ostatus_subscribe pleroma proxy push registration relay settings status tag user-search " +
  "user_exists users web verify_credentials update_credentials relationships search confirmation_resend mfa " +
  "admin administrator root starling instance images static"
).split(" ");
const RESERVED = new Set(RESERVED_NICKNAMES);

export const NICKNAME_PATTERN = /^[a-zA-Z0-9_]{1,30}$/;
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Actor URLs of a local account. */
export function localActorUrls(base: string, username: string) {
  const uri = `${base}/users/${username}`;
  return {
    uri,
    url: uri,
    inboxUrl: `${uri}/inbox`,
    outboxUrl: `${uri}/outbox`,
    followersUrl: `${uri}/followers`,
    sharedInboxUrl: `${base}/inbox`,
  };
}

/** What a local activity row stands for: Follow (follows and follow requests), Block, Like, EmojiReact. */
export type ActivityKind = "follows" | "blocks" | "likes" | "reactions";

/**
 * The ActivityPub id of a local account's activity, stored in the row's `uri` in the batch that writes it:
 * `<actor uri>#<kind>/<row id>` (as Mastodon names likes and blocks). The actor's uri was made from the
 * instance's base URL (`localActorUrls`, given `baseUrl`), so the activity lives where its actor does, and
 * migration 0012 could backfill existing rows in SQL with the same form. Reblogs are statuses with their own uri.
 */
export function localActivityUri(actor: { uri: string }, kind: ActivityKind, rowId: string): string {
  return `${actor.uri}#${kind}/${rowId}`;
}

/** Accounts with their local user (null for remote accounts), the one select every look-up starts from. */
export const withUser = (d: DB) =>
  d.select({ account: accounts, user: userColumns }).from(accounts).leftJoin(users, eq(users.accountId, accounts.id));

/** The condition for a local user by nickname or e-mail address (case-insensitive); each form has its own index. */
export function loginMatches(login: string) {
  const key = login.trim().toLowerCase();
  return key.includes("@") ? sql`lower(${users.email}) = ${key}` : eq(accounts.acctKey, key);
}

/** A local user by nickname or e-mail address (case-insensitive). */
export async function findLocalByLogin(d: DB, login: string) {
  const row = await withUser(d).where(loginMatches(login)).get();
  return row && row.user ? { account: row.account, user: row.user } : null;
}

/** An account by id, or by nickname (`alice`, `alice@remote.example`; `alice@<this host>` is local). */
export async function findAccount(d: DB, idOrNickname: string, localHost: string): Promise<AccountWithUser | null> {
  if (isId(idOrNickname)) {
    return (await withUser(d).where(eq(accounts.id, idOrNickname)).get()) ?? null;
  }
  return findByAcct(d, idOrNickname, localHost);
}

/** An account by nickname only (`alice`, `@alice`, `alice@remote.example`; `alice@<this host>` is local). */
export async function findByAcct(d: DB, acct: string, localHost: string): Promise<AccountWithUser | null> {
  const key = acctKeyOf(acct, localHost);
  if (key === null) return null;
  return (await withUser(d).where(eq(accounts.acctKey, key)).get()) ?? null;
}

/** The `acct_key` a nickname is stored under (null: no nickname). */
function acctKeyOf(acct: string, localHost: string): string | null {
  const [username, domain] = acct.trim().replace(/^@/, "").split("@");
  if (!username) return null;
  const local = !domain || domain.toLowerCase() === localHost.toLowerCase();
  return local ? username.toLowerCase() : `${username}@${domain}`.toLowerCase();
}

/** `findAccount`'s match as a condition on `accounts` (unaliased), for statements that read the account alongside. */
export function accountMatch(idOrNickname: string, localHost: string): SQL {
  if (isId(idOrNickname)) return sql`${accounts.id} = ${idOrNickname}`;
  const key = acctKeyOf(idOrNickname, localHost);
  return key === null ? sql`0` : sql`${accounts.acctKey} = ${key}`;
}

/**
 * The profile directory (Pleroma's rule): discoverable, active accounts, newest activity (`active`) or newest
 * account (`new`) first, without the viewer and accounts the viewer blocks, mutes or whose domain they block.
 */
export function directory(
  d: DB,
  q: { viewerId: string | null; order: "active" | "new"; local: boolean; limit: number; offset: number },
) {
  // Unconfirmed local users are not active yet.
  const conds = [
    eq(accounts.discoverable, true),
    eq(accounts.deactivated, false),
    or(isNull(users.accountId), and(eq(users.confirmed, true), eq(users.approvalPending, false)))!,
  ];
  if (q.local) conds.push(isNull(accounts.domain));
  if (q.viewerId) conds.push(ne(accounts.id, q.viewerId), notSilenced(q.viewerId, false, accounts.id));
  const order =
    q.order === "new"
      ? [desc(accounts.createdAt), desc(accounts.id)]
      : [sql`${accounts.lastStatusAt} IS NULL`, desc(accounts.lastStatusAt), desc(accounts.id)];
  return withUser(d)
    .where(and(...conds))
    .orderBy(...order)
    .limit(q.limit)
    .offset(q.offset);
}

// ---- registration ----

export interface RegistrationInput {
  username: string;
  email: string;
  password: string;
  locale?: string;
  language?: string;
  fullname?: string;
  bio?: string;
  token?: string;
  /** Why the person wants to join: required while approval is required. */
  reason?: string;
}

/** Pleroma reports field errors as a JSON-encoded map inside `error`, which Pleroma-FE parses. */
export function fieldErrors(errors: Record<string, string[]>): ApiError {
  return badRequest(JSON.stringify(errors));
}

/** Pleroma's checks of a new account's nickname, e-mail address and password (registration, admins, set-up). */
export function credentialErrors(username: string, email: string, password: string): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  if (!NICKNAME_PATTERN.test(username)) add("nickname", "has invalid format");
  else if (RESERVED.has(username.toLowerCase())) add("nickname", "is reserved");
  if (!EMAIL_PATTERN.test(email)) add("email", "has invalid format");
  if (password.length < 8) add("password", "should be at least 8 character(s)");
  if (password.length > 256) add("password", "should be at most 256 character(s)");
  return errors;
}

export interface Registered {
  account: AccountRow;
  user: UserRow;
  token: IssuedToken | null;
  /** The clear confirmation token when one was mailed. */
  confirmationToken: string | null;
  /** Mail was queued in the registration's batch (the confirmation link, the admins' approval requests). */
  mailed: boolean;
}

export async function register(
  d: DB,
  cfg: Config,
  base: string,
  app: AppRow | null,
  input: RegistrationInput,
): Promise<Registered> {
  const errors = credentialErrors(input.username, input.email, input.password);
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  if ((input.fullname ?? "").length > cfg.maxNameLength)
    add("name", `should be at most ${cfg.maxNameLength} character(s)`);
  if ((input.bio ?? "").length > cfg.maxBioLength) add("bio", `should be at most ${cfg.maxBioLength} character(s)`);
  const reason = (input.reason ?? "").trim();
  if (cfg.approvalRequired && !reason) add("reason", "can't be blank");
  if (reason.length > cfg.registrationReasonLength)
    add("reason", `should be at most ${cfg.registrationReasonLength} character(s)`);
  if (Object.keys(errors).length) throw fieldErrors(errors);

  const t = now();
  const codes = await shortcodesIn([input.fullname ?? "", input.bio ?? ""]);
  const [nickTaken, emailTaken, invite, emojiRows, admins] = await readsWhere(d, [
    d.select({ id: accounts.id }).from(accounts).where(eq(accounts.acctKey, input.username.toLowerCase())),
    d
      .select({ id: users.accountId })
      .from(users)
      .where(sql`lower(${users.email}) = ${input.email.toLowerCase()}`),
    d
      .select()
      .from(invites)
      .where(eq(invites.tokenHash, input.token ? await sha256(input.token) : "")),
    localEmojisNamed(d, codes),
    // Told of an account awaiting approval.
    cfg.approvalRequired ? adminEmailsQuery(d) : null,
  ]);
  if (nickTaken.length) add("nickname", "has already been taken");
  if (emailTaken.length) add("email", "has already been taken");
  if (Object.keys(errors).length) throw fieldErrors(errors);

  let inviteId: string | null = null;
  if (!cfg.registrationsOpen) {
    const inv = invite[0];
    if (!inv) throw badRequest("Invalid token");
    if (
      inv.revoked ||
      (inv.expiresAt !== null && inv.expiresAt < t) ||
      (inv.maxUses !== null && inv.uses >= inv.maxUses)
    ) {
      throw badRequest("Expired token");
    }
    inviteId = inv.id;
  }

  const id = newId(t);
  // No signing key yet: `signingKey` makes one when something first signs (RSA generation costs 90–270 ms).
  const confirmationToken = cfg.activationRequired ? randomToken(24) : null;
  const account: AccountRow = {
    ...emptyAccount(id, input.username, t),
    ...localActorUrls(base, input.username),
    displayName: input.fullname ?? "",
    note: plainTextToHtml(input.bio ?? ""),
    emojis: profileEmojis(codes, emojiRows),
  };
  const user: UserRow = {
    accountId: id,
    email: input.email,
    confirmed: !cfg.activationRequired,
    confirmationSentAt: confirmationToken ? t : null,
    locale: input.language || input.locale || "en",
    defaultScope: "public",
    sensitive: false,
    postingLanguage: null,
    noteSource: input.bio ?? "",
    fieldsSource: [],
    noRichText: false,
    showRole: true,
    skipThreadContainment: false,
    allowFollowingMove: true,
    isAdmin: false,
    isModerator: false,
    settingsStore: {},
    notificationSettings: { block_from_strangers: false, hide_notification_contents: false },
    inviteId,
    mascot: null,
    approvalPending: cfg.approvalRequired,
    registrationReason: reason || null,
    lastActiveAt: t,
    createdAt: t,
  };
  const confirmationTokenHash = confirmationToken ? await sha256(confirmationToken) : null;
  const passwordHash = await hashPassword(input.password, cfg.passwordIterations);
  // A token for the app that registered it (none for the web page, which starts a browser session instead).
  const token =
    app && user.confirmed && !user.approvalPending
      ? await buildToken({ appId: app.id, accountId: id, scopes: app.scopes.split(" ") })
      : null;

  const mail = confirmationToken ? [confirmationMail(cfg, base, account, user.email, confirmationToken)] : [];
  if (user.approvalPending)
    for (const to of emailsOf(admins)) mail.push(approvalRequestMail(cfg, base, account, user.email, reason, to));

  try {
    await d.batch([
      d.insert(accounts).values(account),
      ...mail.map((m) => queueMail(d, cfg, base, m, t)),
      d.insert(users).values({ ...user, confirmationTokenHash }),
      d.insert(credentials).values({ accountId: id, passwordHash, privateKey: null }),
      ...(token ? [d.insert(tokens).values(token.row)] : []),
      ...(inviteId
        ? [
            d
              .update(invites)
              .set({ uses: sql`${invites.uses} + 1` })
              .where(eq(invites.id, inviteId)),
          ]
        : []),
    ]);
  } catch (e) {
    // Racing registrations on one invite: its `invites_max_uses` trigger aborts the batch that would overuse it.
    if (String(e).includes("invite_exhausted")) throw badRequest("Expired token");
    // Two registrations racing for one name: the unique index decides.
    if (String(e).includes("UNIQUE")) {
      throw fieldErrors(
        String(e).includes("email") ? { email: ["has already been taken"] } : { nickname: ["has already been taken"] },
      );
    }
    throw e;
  }
  return { account, user, token, confirmationToken, mailed: mail.length > 0 };
}

/** A local account row with defaults; callers fill in what they know. */
export function emptyAccount(id: string, username: string, t: number): AccountRow {
  return {
    id,
    username,
    domain: null,
    displayName: "",
    note: "",
    avatar: null,
    header: null,
    background: null,
    locked: false,
    actorType: "Person",
    discoverable: false,
    fields: [],
    emojis: [],
    alsoKnownAs: [],
    tags: [],
    uri: "",
    url: "",
    inboxUrl: null,
    sharedInboxUrl: null,
    outboxUrl: null,
    followersUrl: null,
    publicKey: null,
    followersCount: 0,
    followingCount: 0,
    statusesCount: 0,
    lastStatusAt: null,
    movedToAccountId: null,
    hideFollowers: false,
    hideFollows: false,
    hideFollowersCount: false,
    hideFollowsCount: false,
    hideFavorites: true,
    acceptsChatMessages: true,
    favicon: null,
    deactivated: false,
    createdAt: t,
    updatedAt: t,
    fetchedAt: null,
    homePull: false,
    acctKey: username.toLowerCase(),
  };
}

// ---- e-mail confirmation ----

/** Marks the user confirmed when the token matches; false otherwise. */
export async function confirmEmail(d: DB, accountId: string, token: string): Promise<boolean> {
  const rows = await d
    .update(users)
    .set({ confirmed: true, confirmationTokenHash: null })
    .where(and(eq(users.accountId, accountId), eq(users.confirmationTokenHash, await sha256(token))))
    .returning({ id: users.accountId });
  return rows.length > 0;
}

/**
 * The confirmation mail again, to an unconfirmed user with this e-mail or nickname, if there is one: a fresh
 * token and its mail in one batch (the mail is queued, sent by the Effects door).
 */
export async function resendConfirmation(d: DB, cfg: Config, base: string, login: string): Promise<Effects> {
  const found = await findLocalByLogin(d, login);
  if (!found || found.user.confirmed) return {};
  const token = randomToken(24);
  const t = now();
  await d.batch([
    d
      .update(users)
      .set({ confirmationTokenHash: await sha256(token), confirmationSentAt: t })
      .where(eq(users.accountId, found.account.id)),
    queueMail(d, cfg, base, confirmationMail(cfg, base, found.account, found.user.email, token), t),
  ]);
  return { mail: true };
}

/**
 * What admins are mailed when someone asks to join while approval is required (Pleroma's
 * `new_unapproved_registration`): who, and the reason they gave.
 */
export function approvalRequestMail(
  cfg: Config,
  base: string,
  account: AccountRow,
  email: string,
  reason: string,
  to: string,
) {
  const esc = (x: string) => x.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  return {
    to,
    subject: `New account up for review on ${cfg.name} (@${account.username})`,
    text: `New account for review: @${account.username} (${email})\n\nReason: ${reason}\n\nApprove or reject it in the admin interface: ${base}/pleroma/admin/\n`,
    html: `<p>New account for review: @${esc(account.username)} (${esc(email)})</p><blockquote>${esc(reason)}</blockquote><p>Approve or reject it in the admin interface.</p>`,
  };
}

export function confirmationMail(cfg: Config, base: string, account: AccountRow, email: string, token: string) {
  const link = `${base}/api/account/confirm_email/${account.id}/${token}`;
  return {
    to: email,
    subject: `${cfg.name} account confirmation`,
    text: `Hello ${account.username},\n\nConfirm your account on ${cfg.name} by opening this link:\n${link}\n`,
    html: `<p>Hello ${account.username},</p><p>Confirm your account on ${cfg.name} by opening this link:</p><p><a href="${link}">${link}</a></p>`,
  };
}

// ---- profile updates ----

export type FieldInput = { name?: string; value?: string };

export interface CredentialsUpdate {
  account: Partial<AccountRow>;
  user: Partial<UserRow>;
}

/** Renders profile fields; values become HTML with links, names stay text. */
function renderFields(fields: { name: string; value: string }[]): AccountField[] {
  return fields.map((f) => ({ name: f.name, value: plainTextToHtml(f.value), verified_at: null }));
}

/**
 * Applies an update to the account and user rows in one batch. Given the row `before`, a change other servers
 * see is announced to them (an `Update` of the actor) in the same batch.
 */
export async function saveCredentials(
  d: DB,
  accountId: string,
  update: CredentialsUpdate,
  before?: AccountRow,
): Promise<AccountWithUser> {
  const t = now();
  const [acc, usr] = (await mixedBatch(d, [
    d
      .update(accounts)
      .set({ ...update.account, updatedAt: t })
      .where(eq(accounts.id, accountId))
      .returning(),
    Object.keys(update.user).length
      ? d.update(users).set(update.user).where(eq(users.accountId, accountId)).returning(userColumns)
      : d.select(userColumns).from(users).where(eq(users.accountId, accountId)),
    ...(before ? profileUpdateWrites(d, before, update.account, t) : []),
  ])) as [AccountRow[], UserRow[]];
  return { account: acc[0]!, user: usr[0] ?? null };
}

// ---- credential updates ----

/** The settings store is opaque to the server, but bounded: 64 KB of JSON per frontend, 16 frontends. */
const SETTINGS_STORE_FRONTEND_BYTES = 64 * 1024;
const SETTINGS_STORE_FRONTENDS = 16;

type Visibility = "public" | "unlisted" | "private" | "direct" | "local";
type ActorType = "Person" | "Service" | "Group" | "Application";

/** What `update_credentials` may change (absent: unchanged; `""` for an image: removed). */
export interface CredentialsInput {
  display_name?: string;
  note?: string;
  avatar?: FormFile | "";
  header?: FormFile | "";
  pleroma_background_image?: FormFile | "";
  locked?: boolean;
  bot?: boolean;
  discoverable?: boolean;
  actor_type?: ActorType;
  source?: { privacy?: Visibility; sensitive?: boolean; language?: string };
  fields_attributes?: { name: string; value: string }[];
  no_rich_text?: boolean;
  hide_followers?: boolean;
  hide_follows?: boolean;
  hide_followers_count?: boolean;
  hide_follows_count?: boolean;
  hide_favorites?: boolean;
  show_role?: boolean;
  default_scope?: Visibility;
  pleroma_settings_store?: Record<string, unknown>;
  skip_thread_containment?: boolean;
  allow_following_move?: boolean;
  also_known_as?: string[];
  accepts_chat_messages?: boolean;
  language?: string;
}

/**
 * Updates the user's profile and settings: Pleroma's length and count checks (413), new images stored first,
 * then account and user rows in one batch. Answers the saved rows and what follows (the replaced images'
 * deletion, the delivery of the profile's Update).
 */
export async function updateCredentials(
  d: DB,
  cfg: Config,
  media: { bucket: R2Bucket; images?: ImagesBinding },
  me: { account: AccountRow; user: UserRow },
  input: CredentialsInput,
): Promise<{ saved: AccountWithUser; effects: Effects }> {
  const update = credentialsUpdate(cfg, input, me.user);
  const prefix = `accounts/${me.account.id.toLowerCase()}`;
  // Avatars and headers at Mastodon's sizes (cropped to fill), so every app downloads what it shows.
  const images = [
    ["avatar", input.avatar, cfg.avatarUploadLimit, { width: 400, height: 400 }],
    ["header", input.header, cfg.bannerUploadLimit, { width: 1500, height: 500 }],
    ["background", input.pleroma_background_image, cfg.backgroundUploadLimit, null],
  ] as const;
  const replaced: string[] = [];
  if (
    update.account.displayName !== undefined ||
    update.user.noteSource !== undefined ||
    update.user.fieldsSource !== undefined
  ) {
    // The profile's `:code:`s are resolved against local emoji when it is saved, as a status's are when posted.
    const fields = update.user.fieldsSource ?? me.user.fieldsSource;
    const codes = await shortcodesIn([
      update.account.displayName ?? me.account.displayName,
      update.user.noteSource ?? me.user.noteSource,
      ...fields.flatMap((f) => [f.name, f.value]),
    ]);
    update.account.emojis = codes.length ? profileEmojis(codes, await localEmojisNamed(d, codes)) : [];
  }
  for (const [column, value, limit, box] of images) {
    if (value === undefined) continue;
    update.account[column] =
      value === "" ? null : (await storeImage(media.bucket, prefix, value, limit, { images: media.images, box })).key;
    const old = me.account[column];
    if (isStoredKey(old)) replaced.push(old);
  }
  const saved = await saveCredentials(d, me.account.id, update, me.account);
  // The old images go once the new profile is saved; the profile goes to the followers' servers (Update).
  return { saved, effects: { files: replaced, federate: true } };
}

/** The column changes an update asks for, after Pleroma's length and count checks (413 when exceeded). */
function credentialsUpdate(cfg: Config, p: CredentialsInput, user: UserRow): CredentialsUpdate {
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
    if (
      fields.some((f) => f.name.length > cfg.fieldsLimits.name_length || f.value.length > cfg.fieldsLimits.value_length)
    ) {
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
        throw new ApiError(
          400,
          `Settings store entry too large: ${frontend.slice(0, 100)} holds more than ${SETTINGS_STORE_FRONTEND_BYTES / 1024} KB`,
        );
      }
    }
    // Each frontend's entry is replaced whole; other frontends keep theirs.
    const store = { ...user.settingsStore, ...p.pleroma_settings_store };
    if (Object.keys(store).length > SETTINGS_STORE_FRONTENDS)
      throw new ApiError(400, `Settings store holds at most ${SETTINGS_STORE_FRONTENDS} frontends`);
    u.settingsStore = store;
  }
  return { account, user: u };
}

/** The owner's counters shown on their own account: pending follow requests, unread conversations and notifications (one batch). */
export async function ownerCounters(d: DB, accountId: string) {
  const [requests, unread, unseen] = await d.batch([
    d.select({ n: count() }).from(followRequests).where(eq(followRequests.targetAccountId, accountId)),
    d
      .select({ n: count() })
      .from(participations)
      .where(and(eq(participations.accountId, accountId), eq(participations.unread, true))),
    d
      .select({ n: count() })
      .from(notifications)
      .where(and(eq(notifications.accountId, accountId), eq(notifications.isSeen, false))),
  ]);
  return {
    followRequestsCount: requests[0]?.n ?? 0,
    unreadConversationCount: unread[0]?.n ?? 0,
    unreadNotificationsCount: unseen[0]?.n ?? 0,
  };
}

/**
 * The account a request names by id to act on or show (Pleroma's nested paths take ids only): 404 "Can't find
 * user" for an unknown or deactivated one.
 */
export async function accountToActOn(d: DB, id: string, localHost: string): Promise<AccountWithUser> {
  const found = isId(id) ? await findAccount(d, id, localHost) : null;
  if (!found || found.account.deactivated) throw notFound("Can't find user");
  return found;
}
