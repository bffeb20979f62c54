/** Bindings from wrangler.toml plus the instance configuration read from `[vars]` and secrets. */
import { PBKDF2_MAX_ITERATIONS, PBKDF2_MIN_ITERATIONS } from "./lib/crypto";
import type { ChatRoomMethods, HostDeliveryMethods, StreamMethods } from "./objects/contracts";
export interface Env {
  DB: D1Database;
  /** Public files (uploads, avatars, emoji): what MEDIA_DOMAIN serves as it is, when set (docs/configuration.md). */
  MEDIA: R2Bucket;
  /** Files only the Worker serves (account archives, frontend builds, instance documents): never on MEDIA_DOMAIN. */
  PRIVATE: R2Bucket;
  /** Cloudflare Images: thumbnails and blurhash of uploaded pictures (optional: without it, neither is made). */
  IMAGES?: ImagesBinding;
  /** Streaming: one object per user holding that user's connections (src/objects/streams.ts). */
  USER_STREAMS: DurableObjectNamespace<StreamMethods>;
  /** Streaming: one object per public or hashtag stream holding its anonymous connections. */
  TOPIC_STREAMS: DurableObjectNamespace<StreamMethods>;
  /** Outgoing deliveries, one object per destination host (src/objects/host-delivery.ts). */
  DELIVERY: DurableObjectNamespace<HostDeliveryMethods>;
  /** Chats: one object per chat, the single writer of its messages and unread counts (src/objects/chat-room.ts). */
  CHAT_ROOMS: DurableObjectNamespace<ChatRoomMethods>;
  /** Cloudflare Email Routing binding; present only when configured. */
  EMAIL?: SendEmail;
  /** Workers AI: translation (services/translation.ts). Added by `npm run deploy`, never by wrangler.toml (`wrangler dev` would need an account). */
  AI?: Ai;

  INSTANCE_NAME?: string;
  INSTANCE_DESCRIPTION?: string;
  INSTANCE_SHORT_DESCRIPTION?: string;
  INSTANCE_EMAIL?: string;
  /** The public host name; when empty, the host the client reached is used. */
  DOMAIN?: string;
  /** The public bucket's custom domain (e.g. media.social.example): media URLs point there; else at `/media/`. */
  MEDIA_DOMAIN?: string;
  /** Development only: "true" lets outbound requests reach private and loopback addresses (src/lib/outbound.ts). */
  ALLOW_PRIVATE_ADDRESS?: string;
  REGISTRATIONS_OPEN?: string;
  ACCOUNT_ACTIVATION_REQUIRED?: string;
  /** "true": new accounts wait for an admin's approval and must give a `reason` (docs/configuration.md). */
  ACCOUNT_APPROVAL_REQUIRED?: string;
  /** Longest registration `reason` accepted (Pleroma's `registration_reason_length`). */
  REGISTRATION_REASON_LENGTH?: string;
  CAPTCHA?: string;
  MAILER?: string;
  MAIL_FROM?: string;
  MAX_TOOT_CHARS?: string;
  /** Media attachments per post (1 to 40). */
  MAX_MEDIA_ATTACHMENTS?: string;
  CHAT_LIMIT?: string;
  DESCRIPTION_LIMIT?: string;
  UPLOAD_LIMIT?: string;
  AVATAR_UPLOAD_LIMIT?: string;
  BACKGROUND_UPLOAD_LIMIT?: string;
  BANNER_UPLOAD_LIMIT?: string;
  /** MIME types accepted by media uploads (comma or space separated); the type is sniffed from the bytes. */
  UPLOAD_TYPES?: string;
  POLL_MAX_OPTIONS?: string;
  POLL_MAX_OPTION_CHARS?: string;
  POLL_MIN_EXPIRATION?: string;
  POLL_MAX_EXPIRATION?: string;
  MAX_ACCOUNT_FIELDS?: string;
  ACCOUNT_FIELD_NAME_LENGTH?: string;
  ACCOUNT_FIELD_VALUE_LENGTH?: string;
  MAX_BIO_LENGTH?: string;
  MAX_NAME_LENGTH?: string;
  REGISTRATIONS_PER_IP?: string;
  REGISTRATIONS_WINDOW_SECONDS?: string;
  LOGIN_FAILURES_PER_IP?: string;
  LOGIN_FAILURES_PER_IP_WINDOW_SECONDS?: string;
  LOGIN_FAILURES_PER_ACCOUNT?: string;
  LOGIN_FAILURES_PER_ACCOUNT_WINDOW_SECONDS?: string;
  CONFIRMATION_RESENDS?: string;
  CONFIRMATION_RESENDS_WINDOW_SECONDS?: string;
  PASSWORD_RESETS?: string;
  PASSWORD_RESETS_WINDOW_SECONDS?: string;
  REMOTE_INTERACTIONS?: string;
  STATUS_EDITS?: string;
  STATUS_EDITS_WINDOW_SECONDS?: string;
  ARCHIVE_IMPORTS?: string;
  ARCHIVE_IMPORTS_WINDOW_SECONDS?: string;
  REMOTE_INTERACTIONS_WINDOW_SECONDS?: string;
  MFA_FAILURES_PER_ACCOUNT?: string;
  MFA_FAILURES_PER_ACCOUNT_WINDOW_SECONDS?: string;
  LANGUAGES?: string;
  FANOUT_INLINE_MAX?: string;
  /** Streaming objects one invocation calls directly when publishing (more are reached through a relay). */
  STREAM_FANOUT?: string;
  STATS_CACHE_SECONDS?: string;
  /** Benchmarks only: "true" serves the isolate's cost counters at `/__cost` (bench/cost.ts). */
  COST_METER?: string;
  /** Retention and the storage guard (services/retention.ts, services/storage.ts; docs/configuration.md). */
  REMOTE_POST_RETENTION_DAYS?: string;
  NOTIFICATION_RETENTION_DAYS?: string;
  DATABASE_LIMIT_MB?: string;
  RESOLVE_TIMEOUT_MS?: string;
  PASSWORD_ITERATIONS?: string;
  /** Secret: opens `/setup` (the first administrator, in the browser) until an admin exists. */
  SETUP_SECRET?: string;
  /** Optional VAPID key pair (base64url); generated once and stored in D1 when unset. */
  VAPID_PUBLIC_KEY?: string;
  VAPID_PRIVATE_KEY?: string;
  /** Worker secret: the key TOTP secrets are encrypted with (docs/security.md); else one kept in D1. */
  SECRETS_KEY?: string;
  /** "true": actors' full documents, statuses and collections are served only to signed requests (Mastodon's secure mode). */
  AUTHORIZED_FETCH?: string;
  /** "false" stops sending local public posts to the relays followed (issue 36). */
  ALLOW_RELAY?: string;
  /** The Workers plan (`free` or `paid`), set by the deploy command: the caps of the budget meter (services/usage-budget.ts). */
  PLAN?: string;
  /** A LibreTranslate-compatible server for translation (Mastodon's variable names), instead of Workers AI. */
  LIBRE_TRANSLATE_ENDPOINT?: string;
  LIBRE_TRANSLATE_API_KEY?: string;
  /** Workers AI neurons translation may spend a day (the Free allowance, 10,000, by default). */
  TRANSLATION_DAILY_NEURONS?: string;
  /** "false" turns translation off. */
  TRANSLATION_ENABLED?: string;
  /** Translations one user may have made by the model a day (answers from the store are free). */
  TRANSLATIONS_PER_USER?: string;
  TRANSLATIONS_PER_USER_WINDOW_SECONDS?: string;
  /** Secret: a read-only API token (Account Analytics: Read) for the meter's exact figures; else it estimates. */
  CF_ANALYTICS_TOKEN?: string;
  /** The Cloudflare account id the token reads the figures of. */
  CF_ACCOUNT_ID?: string;
}

export interface Limit {
  max: number;
  windowSeconds: number;
}

export const VERSION = "0.1.0";

/**
 * Media per post: Pleroma's default limit (the contract sets none), the default and the most MAX_MEDIA_ATTACHMENTS
 * may be, and the cap of the `media_ids` parameter. A post's media are read and attached by JSON parameters, so
 * their number costs no extra round trips.
 */
export const MEDIA_ATTACHMENTS_MAX = 1000;

/** Every type an upload is recognised as (`sniffMedia` in src/services/media.ts: keep in step with it); `application/octet-stream` is any other file. */
const DEFAULT_UPLOAD_TYPES = [
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
  "image/avif",
  // HEIC and HEIF pictures (iPhone photos) are stored as JPEG.
  "image/heic",
  "video/mp4",
  "video/quicktime",
  "video/webm",
  "audio/mp4",
  "audio/ogg",
  "audio/flac",
  "audio/wav",
  "audio/mpeg",
  "application/octet-stream",
];

export interface Config {
  name: string;
  description: string;
  shortDescription: string;
  email: string;
  domain: string | null;
  /** Where public files are served from, when not through the Worker (`MEDIA_DOMAIN`). */
  mediaDomain: string | null;
  registrationsOpen: boolean;
  activationRequired: boolean;
  approvalRequired: boolean;
  registrationReasonLength: number;
  captcha: "none" | "native";
  mailer: "outbox" | "cloudflare";
  mailFrom: string;
  maxTootChars: number;
  maxMediaAttachments: number;
  chatLimit: number;
  descriptionLimit: number;
  uploadLimit: number;
  avatarUploadLimit: number;
  backgroundUploadLimit: number;
  bannerUploadLimit: number;
  uploadTypes: string[];
  pollLimits: { max_options: number; max_option_chars: number; min_expiration: number; max_expiration: number };
  fieldsLimits: { max_fields: number; max_remote_fields: number; name_length: number; value_length: number };
  maxBioLength: number;
  maxNameLength: number;
  /** Throttles (docs/security.md): each a number of hits per fixed window. */
  rateLimits: {
    /** Registrations per address. */
    registration: Limit;
    /** Failed password checks (HTTP Basic, password grant, authorize form) per address, and per account. */
    loginPerIp: Limit;
    loginPerAccount: Limit;
    /** Confirmation mails asked for, per address and per e-mail/nickname. */
    confirmationResend: Limit;
    /** Password reset mails asked for (`POST /auth/password`), per address and per e-mail/nickname. */
    passwordReset: Limit;
    /** Wrong MFA codes (TOTP or backup) per account, whatever the MFA token. */
    mfaFailures: Limit;
    /** Remote interaction look-ups (each WebFingers another server for anyone who asks), per address. */
    remoteInteraction: Limit;
    /** Edits of one status (each edit is an `Update` to every follower's server). */
    statusEdits: Limit;
    /** Translations made by the model (not answered from the cache) per user. */
    translations: Limit;
    /** Account archives uploaded for import per account (each may cost the cron a step of inflating and parsing). */
    archiveImports: Limit;
  };
  languages: string[];
  /** Followers up to which a post's home-feed fan-out is written in the post's own batch. */
  inlineFanoutMax: number;
  streamFanout: number;
  /** How long the instance's figures are kept in the edge cache (0: read every time). */
  statsCacheSeconds: number;
  /** Remote statuses nobody here interacted with are deleted after this many days (0: kept). */
  remotePostRetentionDays: number;
  /** Notifications are deleted after this many days (0: kept). */
  notificationRetentionDays: number;
  /** The database's ceiling (the plan's: 500 MB on Workers Free), for the storage guard. */
  databaseLimitMb: number;
  /** How long looking a remote account up may hold a request (then it goes on after the answer). */
  resolveTimeoutMs: number;
  /** PBKDF2 iterations of new password hashes (10,000 to 100,000; workerd allows no more). */
  passwordIterations: number;
  /** Authorized fetch (`AUTHORIZED_FETCH`, run-time `authorized_fetch_mode`): federation GETs must be signed. */
  authorizedFetch: boolean;
  /** The installed frontends served at `/` and `/pleroma/admin/` (run-time `:frontends`; none by default). */
  frontends: { primary: { name: string; ref: string } | null; admin: { name: string; ref: string } | null };
  /** What `/api/pleroma/frontend_configurations` gives each frontend (run-time `:frontend_configurations`). */
  frontendConfigurations: Record<string, Record<string, unknown>>;
  /** Local public posts go to the accepted relays (`ALLOW_RELAY`, run-time `allow_relay`; on, as Pleroma's). */
  allowRelay: boolean;
  /**
   * The mention shield (run-time `mention_shield`, off by default): mentions that look like a spam wave are filtered
   * (services/mention-shield.ts reads the stored setting inside the statement that notifies).
   */
  mentionShield: boolean;
  /** The Workers plan (`PLAN`): whose caps the budget meter compares the day's usage with. */
  plan: "free" | "paid";
  /** Translation (services/translation.ts): on unless turned off; it works only with a backend. */
  translation: { enabled: boolean; dailyNeurons: number };
}

function int(value: string | undefined, fallback: number): number {
  const n = value === undefined || value === "" ? NaN : Number(value);
  return Number.isFinite(n) ? Math.trunc(n) : fallback;
}

function bool(value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === "") return fallback;
  return ["true", "1", "yes", "on"].includes(value.toLowerCase());
}

const cache = new WeakMap<Env, Config>();

/**
 * Settings an admin changed at run time (src/services/instance-settings.ts keeps them fresh per database binding): a
 * function over the `[vars]` configuration, and a stamp that changes whenever the settings do.
 */
export interface RuntimeOverrides {
  stamp: number;
  apply: (base: Config) => Config;
}
const overrides = new WeakMap<object, RuntimeOverrides>();
const merged = new WeakMap<Env, { stamp: number; config: Config }>();

export function setRuntimeOverrides(binding: object, o: RuntimeOverrides): void {
  overrides.set(binding, o);
}

/**
 * The instance configuration: `[vars]` with Pleroma's defaults for anything unset, overridden by the settings
 * an admin saved (instance_settings), as this isolate last read them. Synchronous: no D1 read here.
 */
export function config(env: Env): Config {
  const base = varsConfig(env);
  const binding = env.DB as unknown as Record<symbol, object | undefined> | undefined;
  // A wrapper of the binding (see WRAPPED_BINDING in src/lib/meter.ts) shares the binding's settings.
  const o = binding ? overrides.get(binding[Symbol.for("starling.wrappedBinding")] ?? binding) : undefined;
  if (!o) return base;
  const hit = merged.get(env);
  if (hit && hit.stamp === o.stamp) return hit.config;
  const c = o.apply(base);
  merged.set(env, { stamp: o.stamp, config: c });
  return c;
}

/** The throttles' `[vars]` (docs/security.md "Throttled"). */
function rateLimitsOf(env: Env): Config["rateLimits"] {
  return {
    registration: {
      max: int(env.REGISTRATIONS_PER_IP, 5),
      windowSeconds: int(env.REGISTRATIONS_WINDOW_SECONDS, 30 * 60),
    },
    // Pleroma's `authentication` limit: 15 a minute per address.
    loginPerIp: {
      max: int(env.LOGIN_FAILURES_PER_IP, 15),
      windowSeconds: int(env.LOGIN_FAILURES_PER_IP_WINDOW_SECONDS, 60),
    },
    loginPerAccount: {
      max: int(env.LOGIN_FAILURES_PER_ACCOUNT, 30),
      windowSeconds: int(env.LOGIN_FAILURES_PER_ACCOUNT_WINDOW_SECONDS, 600),
    },
    // Pleroma's `account_confirmation_resend`: 5 per 8,640 s.
    confirmationResend: {
      max: int(env.CONFIRMATION_RESENDS, 5),
      windowSeconds: int(env.CONFIRMATION_RESENDS_WINDOW_SECONDS, 8640),
    },
    // Pleroma's `password_reset`: 5 per 3,600 s.
    passwordReset: { max: int(env.PASSWORD_RESETS, 5), windowSeconds: int(env.PASSWORD_RESETS_WINDOW_SECONDS, 3600) },
    mfaFailures: {
      max: int(env.MFA_FAILURES_PER_ACCOUNT, 10),
      windowSeconds: int(env.MFA_FAILURES_PER_ACCOUNT_WINDOW_SECONDS, 600),
    },
    remoteInteraction: {
      max: int(env.REMOTE_INTERACTIONS, 30),
      windowSeconds: int(env.REMOTE_INTERACTIONS_WINDOW_SECONDS, 300),
    },
    statusEdits: { max: int(env.STATUS_EDITS, 20), windowSeconds: int(env.STATUS_EDITS_WINDOW_SECONDS, 600) },
    translations: {
      max: int(env.TRANSLATIONS_PER_USER, 100),
      windowSeconds: int(env.TRANSLATIONS_PER_USER_WINDOW_SECONDS, 86_400),
    },
    archiveImports: {
      max: int(env.ARCHIVE_IMPORTS, 5),
      windowSeconds: int(env.ARCHIVE_IMPORTS_WINDOW_SECONDS, 86_400),
    },
  };
}

/** The configuration `[vars]` alone (the defaults run-time settings fall back to). */
export function varsConfig(env: Env): Config {
  const hit = cache.get(env);
  if (hit) return hit;
  const description = env.INSTANCE_DESCRIPTION || "A small federated microblogging instance";
  const c: Config = {
    name: env.INSTANCE_NAME || "Starling",
    description,
    shortDescription: env.INSTANCE_SHORT_DESCRIPTION || description,
    email: env.INSTANCE_EMAIL || "",
    domain: env.DOMAIN ? env.DOMAIN.toLowerCase() : null,
    mediaDomain: env.MEDIA_DOMAIN ? env.MEDIA_DOMAIN.toLowerCase() : null,
    registrationsOpen: bool(env.REGISTRATIONS_OPEN, true),
    activationRequired: bool(env.ACCOUNT_ACTIVATION_REQUIRED, false),
    approvalRequired: bool(env.ACCOUNT_APPROVAL_REQUIRED, false),
    registrationReasonLength: int(env.REGISTRATION_REASON_LENGTH, 500),
    captcha: env.CAPTCHA === "native" ? "native" : "none",
    mailer: env.MAILER === "cloudflare" ? "cloudflare" : "outbox",
    mailFrom: env.MAIL_FROM || "",
    maxTootChars: int(env.MAX_TOOT_CHARS, 5000),
    maxMediaAttachments: Math.min(
      MEDIA_ATTACHMENTS_MAX,
      Math.max(1, int(env.MAX_MEDIA_ATTACHMENTS, MEDIA_ATTACHMENTS_MAX)),
    ),
    chatLimit: int(env.CHAT_LIMIT, 5000),
    descriptionLimit: int(env.DESCRIPTION_LIMIT, 5000),
    uploadLimit: int(env.UPLOAD_LIMIT, 16_000_000),
    avatarUploadLimit: int(env.AVATAR_UPLOAD_LIMIT, 2_000_000),
    backgroundUploadLimit: int(env.BACKGROUND_UPLOAD_LIMIT, 4_000_000),
    bannerUploadLimit: int(env.BANNER_UPLOAD_LIMIT, 4_000_000),
    uploadTypes: env.UPLOAD_TYPES
      ? env.UPLOAD_TYPES.toLowerCase()
          .split(/[\s,]+/)
          .filter(Boolean)
      : DEFAULT_UPLOAD_TYPES,
    pollLimits: {
      max_options: int(env.POLL_MAX_OPTIONS, 20),
      max_option_chars: int(env.POLL_MAX_OPTION_CHARS, 200),
      min_expiration: int(env.POLL_MIN_EXPIRATION, 0),
      max_expiration: int(env.POLL_MAX_EXPIRATION, 365 * 24 * 3600),
    },
    fieldsLimits: {
      max_fields: int(env.MAX_ACCOUNT_FIELDS, 4),
      max_remote_fields: 20,
      name_length: int(env.ACCOUNT_FIELD_NAME_LENGTH, 512),
      value_length: int(env.ACCOUNT_FIELD_VALUE_LENGTH, 2048),
    },
    maxBioLength: int(env.MAX_BIO_LENGTH, 5000),
    maxNameLength: int(env.MAX_NAME_LENGTH, 100),
    rateLimits: rateLimitsOf(env),
    languages: (env.LANGUAGES || "en").split(/[\s,]+/).filter(Boolean),
    inlineFanoutMax: int(env.FANOUT_INLINE_MAX, 200),
    streamFanout: Math.max(2, int(env.STREAM_FANOUT, 40)),
    statsCacheSeconds: Math.max(0, int(env.STATS_CACHE_SECONDS, 60)),
    remotePostRetentionDays: Math.max(0, int(env.REMOTE_POST_RETENTION_DAYS, 30)),
    notificationRetentionDays: Math.max(0, int(env.NOTIFICATION_RETENTION_DAYS, 180)),
    databaseLimitMb: Math.max(1, int(env.DATABASE_LIMIT_MB, 500)),
    resolveTimeoutMs: Math.min(30_000, Math.max(100, int(env.RESOLVE_TIMEOUT_MS, 5_000))),
    passwordIterations: Math.min(
      PBKDF2_MAX_ITERATIONS,
      Math.max(PBKDF2_MIN_ITERATIONS, int(env.PASSWORD_ITERATIONS, PBKDF2_MAX_ITERATIONS)),
    ),
    authorizedFetch: bool(env.AUTHORIZED_FETCH, false),
    frontends: { primary: null, admin: null },
    frontendConfigurations: {},
    allowRelay: bool(env.ALLOW_RELAY, true),
    mentionShield: false,
    plan: env.PLAN === "paid" ? "paid" : "free",
    translation: {
      enabled: bool(env.TRANSLATION_ENABLED, true),
      dailyNeurons: Math.max(0, int(env.TRANSLATION_DAILY_NEURONS, 10_000)),
    },
  };
  cache.set(env, c);
  return c;
}
