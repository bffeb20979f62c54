/**
 * A local user's own changes to their profile and settings (`update_credentials`, and the Pleroma image routes):
 * Pleroma's length and count checks, new images stored, account and user rows in one batch with the profile's
 * `Update` for other servers (profile-updates.ts).
 */
import { QUOTE_POLICIES } from "../lib/quote-policy";
import { eq } from "drizzle-orm";
import type { DB } from "../db/client";
import { mixedBatch, now } from "../db/client";
import { accounts, userColumns, users, type AccountField } from "../db/schema";
import { plainTextToHtml } from "../content/text";
import { ApiError } from "../lib/errors";
import type { FormFile } from "../lib/form-file";
import type { Config } from "../env";
import type { AccountRow, AccountWithUser, UserRow } from "./accounts";
import type { Effects } from "./effects";
import { storeImage } from "./media";
import { isStoredKey } from "../lib/media-urls";
import { localEmojisNamed, profileEmojis, shortcodesIn } from "./emoji";
import { profileUpdateWrites } from "./profile-updates";
import { queueFileDeletions } from "./file-deletions";

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
  replaced: string[] = [],
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
    // The replaced images' files: deleted by the door after the answer, and by the cron if that fails.
    ...(replaced.length ? [queueFileDeletions(d, replaced, t)] : []),
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
  source?: { privacy?: Visibility; sensitive?: boolean; language?: string; quote_policy?: string };
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
  // The old images go once the new profile is saved (its Update to the followers' servers is in the batch).
  const saved = await saveCredentials(d, me.account.id, update, me.account, replaced);
  return { saved, effects: { files: replaced } };
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
  // Mastodon 4.5's default quote policy; a value this server does not know is ignored.
  const quotePolicy = QUOTE_POLICIES.find((x) => x === p.source?.quote_policy);
  if (quotePolicy) u.quotePolicy = quotePolicy;
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
