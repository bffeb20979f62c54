/**
 * The relational model. Times are integer milliseconds since the epoch; booleans are 0/1 integers;
 * JSON columns hold only data no query filters on. Hot fields have their own indexed columns.
 */
import { getTableColumns, sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

const bool = (name: string) => integer(name, { mode: "boolean" });
const time = (name: string) => integer(name);
const json = <T>(name: string) => text(name, { mode: "json" }).$type<T>();

export interface AccountField {
  name: string;
  value: string;
  verified_at: string | null;
}
export interface EmojiRef {
  shortcode: string;
  url: string;
  static_url: string;
  visible_in_picker: boolean;
}
/**
 * A custom emoji as a status resolved it when written: `domain` null for this instance's, `file` an R2 key (local)
 * or absolute URL (remote). Statuses render these, never a look-up by shortcode alone.
 */
export interface StatusEmoji {
  shortcode: string;
  domain: string | null;
  file: string;
  visible_in_picker: boolean;
}

/** Every actor, local or remote. Local accounts have `domain` null and a row in `users`. */
export const accounts = sqliteTable(
  "accounts",
  {
    id: text("id").primaryKey(),
    username: text("username").notNull(),
    domain: text("domain"),
    displayName: text("display_name").notNull().default(""),
    /** Rendered HTML of the bio. */
    note: text("note").notNull().default(""),
    /** An R2 key (local upload) or an absolute URL (remote); null for the default image. */
    avatar: text("avatar"),
    header: text("header"),
    background: text("background"),
    locked: bool("locked").notNull().default(false),
    actorType: text("actor_type").notNull().default("Person"),
    discoverable: bool("discoverable").notNull().default(false),
    /** Rendered fields: values are HTML. */
    fields: json<AccountField[]>("fields").notNull().default([]),
    emojis: json<EmojiRef[]>("emojis").notNull().default([]),
    alsoKnownAs: json<string[]>("also_known_as").notNull().default([]),
    tags: json<string[]>("tags").notNull().default([]),
    uri: text("uri").notNull(),
    url: text("url").notNull(),
    inboxUrl: text("inbox_url"),
    sharedInboxUrl: text("shared_inbox_url"),
    outboxUrl: text("outbox_url"),
    followersUrl: text("followers_url"),
    publicKey: text("public_key"),
    /** Counters: recounted from rows for local accounts; a remote account keeps what its server reports. */
    followersCount: integer("followers_count").notNull().default(0),
    followingCount: integer("following_count").notNull().default(0),
    statusesCount: integer("statuses_count").notNull().default(0),
    lastStatusAt: time("last_status_at"),
    movedToAccountId: text("moved_to_account_id"),
    hideFollowers: bool("hide_followers").notNull().default(false),
    hideFollows: bool("hide_follows").notNull().default(false),
    hideFollowersCount: bool("hide_followers_count").notNull().default(false),
    hideFollowsCount: bool("hide_follows_count").notNull().default(false),
    hideFavorites: bool("hide_favorites").notNull().default(true),
    acceptsChatMessages: bool("accepts_chat_messages"),
    /**
     * A remote account's instance favicon, copied from `instances.favicon` (where it is learned, once per
     * instance) so that every way accounts are read renders it without a join.
     */
    favicon: text("favicon"),
    deactivated: bool("deactivated").notNull().default(false),
    createdAt: time("created_at").notNull(),
    updatedAt: time("updated_at").notNull(),
    /** When a remote account was last fetched from its server; null for local accounts. */
    fetchedAt: time("fetched_at"),
    /** Some of this account's statuses are pulled by readers (`statuses.home_pull`): home reads visit it. */
    homePull: bool("home_pull").notNull().default(false),
    /** `alice` for local accounts, `alice@remote.example` for remote ones, lower-cased: the look-up key. */
    acctKey: text("acct_key").generatedAlwaysAs(
      sql`lower(username) || CASE WHEN domain IS NULL THEN '' ELSE '@' || lower(domain) END`,
      { mode: "virtual" },
    ),
  },
  (t) => [
    // Nicknames are case-insensitive: one `alice` per domain however it is spelt.
    uniqueIndex("accounts_acct_key").on(t.acctKey),
    uniqueIndex("accounts_uri").on(t.uri),
    index("accounts_url").on(t.url),
    index("accounts_domain").on(t.domain),
    index("accounts_moved")
      .on(t.movedToAccountId)
      .where(sql`moved_to_account_id IS NOT NULL`),
    index("accounts_home_pull")
      .on(t.id)
      .where(sql`home_pull = 1`),
    // Few accounts are deactivated: checking an author against this finds nothing, at no row read.
    index("accounts_deactivated")
      .on(t.id)
      .where(sql`deactivated = 1`),
  ],
);

/** Local users: e-mail and private settings of a local account (same id). Secrets live in `credentials`. */
export const users = sqliteTable(
  "users",
  {
    accountId: text("account_id")
      .primaryKey()
      .references(() => accounts.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    confirmed: bool("confirmed").notNull().default(true),
    confirmationTokenHash: text("confirmation_token_hash"),
    confirmationSentAt: time("confirmation_sent_at"),
    locale: text("locale").notNull().default("en"),
    /** Default visibility of new posts, shown as `source.privacy`. */
    defaultScope: text("default_scope").notNull().default("public"),
    sensitive: bool("sensitive").notNull().default(false),
    postingLanguage: text("posting_language"),
    /** The bio and fields as the user typed them (`source.note`, `source.fields`). */
    noteSource: text("note_source").notNull().default(""),
    fieldsSource: json<{ name: string; value: string }[]>("fields_source").notNull().default([]),
    noRichText: bool("no_rich_text").notNull().default(false),
    showRole: bool("show_role").notNull().default(true),
    skipThreadContainment: bool("skip_thread_containment").notNull().default(false),
    allowFollowingMove: bool("allow_following_move").notNull().default(true),
    isAdmin: bool("is_admin").notNull().default(false),
    isModerator: bool("is_moderator").notNull().default(false),
    settingsStore: json<Record<string, unknown>>("settings_store").notNull().default({}),
    notificationSettings: json<{ block_from_strangers: boolean; hide_notification_contents: boolean }>(
      "notification_settings",
    )
      .notNull()
      .default({ block_from_strangers: false, hide_notification_contents: false }),
    /** Mastodon 4.3's notification policy (services/notification-policy.ts); NULL: the defaults. */
    notificationPolicy: json<Record<string, string>>("notification_policy"),
    /** Who may quote the user's new posts unless a post says otherwise (services/quotes.ts). */
    quotePolicy: text("quote_policy").$type<QuotePolicy>().notNull().default("public"),
    inviteId: text("invite_id"),
    /** Pleroma-FE's mascot: the attachment JSON `PUT /api/v1/pleroma/mascot` answered (null: the default). */
    mascot: json<Record<string, unknown>>("mascot"),
    /** Registered while approval was required and not approved yet: sign-in is refused (src/http/auth.ts). */
    approvalPending: bool("approval_pending").notNull().default(false),
    /** What the user wrote when asking to join (`reason`), for the admins who approve. */
    registrationReason: text("registration_reason"),
    lastActiveAt: time("last_active_at"),
    createdAt: time("created_at").notNull(),
  },
  (t) => [uniqueIndex("users_email").on(sql`lower(${t.email})`), index("users_last_active").on(t.lastActiveAt)],
);

/**
 * The `users` columns code outside login, confirmation and signing may read (every authenticated request, hydration):
 * an allowlist, so a secret added to `users` later is not loaded by default.
 */
// The notification policy is read by services/notification-policy.ts and inside the notifying statement only
// (and a joined select of chats stays within D1's 100 result columns).
export const userColumns = (({ confirmationTokenHash: _hidden, notificationPolicy: _policy, ...visible }) => visible)(
  getTableColumns(users),
);

/**
 * A local account's secrets, read only by the password check, password changes and signing (`services/credentials.ts`):
 * the password hash and the PKCS#8 PEM of the signing key (made when first needed). TOTP secrets and backup codes
 * belong here too.
 */
export const credentials = sqliteTable("credentials", {
  accountId: text("account_id")
    .primaryKey()
    .references(() => accounts.id, { onDelete: "cascade" }),
  passwordHash: text("password_hash").notNull(),
  privateKey: text("private_key"),
  /** Ed25519 private JWK for Object Integrity Proofs (it includes the public point `x`). */
  proofKey: text("proof_key"),
  /** The confirmed TOTP secret, AES-GCM encrypted (`lib/crypto.ts` `sealSecret`); set means MFA is on. */
  totpSecret: text("totp_secret"),
  /** A TOTP secret being set up (encrypted likewise), until confirmed with a code. */
  totpPending: text("totp_pending"),
  /** The last TOTP time step (Unix time / 30 s) accepted: a code is good once, not again within its window. */
  totpLastStep: integer("totp_last_step"),
  /** Pleroma's `password_reset_pending`: sign-in is refused until the password is reset. */
  passwordResetPending: bool("password_reset_pending").notNull().default(false),
});

export const apps = sqliteTable(
  "apps",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    website: text("website"),
    /** Newline-separated, as registered. */
    redirectUris: text("redirect_uris").notNull(),
    scopes: text("scopes").notNull(),
    clientId: text("client_id").notNull(),
    clientSecretHash: text("client_secret_hash").notNull(),
    createdAt: time("created_at").notNull(),
  },
  (t) => [uniqueIndex("apps_client_id").on(t.clientId)],
);

/** Access tokens. Only SHA-256 digests of the token and its refresh token are stored. */
export const tokens = sqliteTable(
  "tokens",
  {
    id: text("id").primaryKey(),
    tokenHash: text("token_hash").notNull(),
    refreshHash: text("refresh_hash"),
    appId: text("app_id").references(() => apps.id, { onDelete: "cascade" }),
    /** Null for app-only tokens (client credentials grant). */
    accountId: text("account_id").references(() => accounts.id, { onDelete: "cascade" }),
    scopes: text("scopes").notNull(),
    createdAt: time("created_at").notNull(),
    expiresAt: time("expires_at").notNull(),
    /** When the sign-in that made this token passed its second factor (the MFA challenge); null otherwise. */
    secondFactorAt: time("second_factor_at"),
  },
  (t) => [
    uniqueIndex("tokens_token_hash").on(t.tokenHash),
    uniqueIndex("tokens_refresh_hash").on(t.refreshHash),
    index("tokens_account").on(t.accountId),
  ],
);

/** Authorization codes: single use, short-lived, stored as digests. */
export const authorizationCodes = sqliteTable(
  "authorization_codes",
  {
    id: text("id").primaryKey(),
    codeHash: text("code_hash").notNull(),
    appId: text("app_id")
      .notNull()
      .references(() => apps.id, { onDelete: "cascade" }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    scopes: text("scopes").notNull(),
    redirectUri: text("redirect_uri").notNull(),
    codeChallenge: text("code_challenge"),
    codeChallengeMethod: text("code_challenge_method"),
    usedAt: time("used_at"),
    createdAt: time("created_at").notNull(),
    expiresAt: time("expires_at").notNull(),
  },
  (t) => [
    uniqueIndex("authorization_codes_code_hash").on(t.codeHash),
    index("authorization_codes_expires").on(t.expiresAt),
  ],
);

/**
 * The ActivityPub id of the activity a row stands for (Follow, Block, Like, EmojiReact): Accept, Reject and Undo
 * from other servers name it. Local rows get `localActivityUri` (src/services/accounts.ts); null only for rows
 * written before the id was known. Tables with it get a unique `<name>_uri` index.
 */
const activityUri = () => ({ uri: text("uri") });

/** A directed pair table: `account_id` acts on `target_account_id`. */
const pairTable = <C extends Record<string, any>>(name: string, extra: C) =>
  sqliteTable(
    name,
    {
      id: text("id").primaryKey(),
      accountId: text("account_id")
        .notNull()
        .references(() => accounts.id, { onDelete: "cascade" }),
      targetAccountId: text("target_account_id")
        .notNull()
        .references(() => accounts.id, { onDelete: "cascade" }),
      createdAt: time("created_at").notNull(),
      ...extra,
    },
    (t) => [
      uniqueIndex(`${name}_pair`).on(t.accountId, t.targetAccountId),
      index(`${name}_target`).on(t.targetAccountId, t.id),
      index(`${name}_account`).on(t.accountId, t.id),
      ...("uri" in extra ? [uniqueIndex(`${name}_uri`).on((t as any).uri)] : []),
    ],
  );

/** A private note of an account's on another (Mastodon's account notes; `note` in the relationship). */
export const accountNotes = pairTable("account_notes", {
  comment: text("comment").notNull(),
  updatedAt: time("updated_at").notNull(),
});

export const follows = pairTable("follows", {
  showReblogs: bool("show_reblogs").notNull().default(true),
  notify: bool("notify").notNull().default(false),
  /** The Follow's id; a follow made by accepting a request keeps the request's. */
  ...activityUri(),
});
export const followRequests = pairTable("follow_requests", {
  showReblogs: bool("show_reblogs").notNull().default(true),
  notify: bool("notify").notNull().default(false),
  ...activityUri(),
});
export const blocks = pairTable("blocks", { ...activityUri() });
/** Indexed (partially, on `expires_at` where set: `mutes_expires`) for the cron's clean-up, in migration 0044. */
export const mutes = pairTable("mutes", {
  hideNotifications: bool("hide_notifications").notNull().default(true),
  expiresAt: time("expires_at"),
});
/** Endorsements: accounts featured on a profile (`POST /accounts/:id/pin`). */
export const endorsements = pairTable("endorsements", {});
/** Pleroma subscriptions: notify on every post of the target. */
export const subscriptions = pairTable("subscriptions", {});

/** Domains an account has blocked. */
export const domainBlocks = sqliteTable(
  "domain_blocks",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    domain: text("domain").notNull(),
    createdAt: time("created_at").notNull(),
  },
  (t) => [uniqueIndex("domain_blocks_pair").on(t.accountId, t.domain)],
);

/** Invitations for closed registrations. */
export const invites = sqliteTable(
  "invites",
  {
    id: text("id").primaryKey(),
    tokenHash: text("token_hash").notNull(),
    maxUses: integer("max_uses"),
    uses: integer("uses").notNull().default(0),
    expiresAt: time("expires_at"),
    createdAt: time("created_at").notNull(),
    /** The token itself, for invites made through the admin API (its invites list shows them). */
    token: text("token"),
    /** Revoked by an admin: admits nobody. */
    revoked: bool("revoked").notNull().default(false),
  },
  (t) => [uniqueIndex("invites_token_hash").on(t.tokenHash)],
);

/** Fixed-window counters, e.g. `register:<ip>`. */
export const rateLimits = sqliteTable(
  "rate_limits",
  {
    key: text("key").primaryKey(),
    windowStart: time("window_start").notNull(),
    count: integer("count").notNull(),
  },
  // The cron's clean-up: windows (kept a day) and the addresses users signed in from (kept a month) apart.
  (t) => [
    index("rate_limits_windows")
      .on(t.windowStart)
      .where(sql`key NOT LIKE 'login:known:%'`),
    index("rate_limits_known")
      .on(t.windowStart)
      .where(sql`key LIKE 'login:known:%'`),
  ],
);

/**
 * What each remote sender (an actor id, or a host name for all its actors) made this instance store in a UTC day,
 * the current hour beside it (services/inbound-limits.ts). WITHOUT ROWID in the migration (0052).
 */
export const inboundUsage = sqliteTable(
  "inbound_usage",
  {
    day: integer("day").notNull(),
    sender: text("sender").notNull(),
    statuses: integer("statuses").notNull().default(0),
    bytes: integer("bytes").notNull().default(0),
    strangerStatuses: integer("stranger_statuses").notNull().default(0),
    strangerBytes: integer("stranger_bytes").notNull().default(0),
    mentions: integer("mentions").notNull().default(0),
    hour: integer("hour").notNull().default(0),
    hourStatuses: integer("hour_statuses").notNull().default(0),
    hourBytes: integer("hour_bytes").notNull().default(0),
    hourStrangerStatuses: integer("hour_stranger_statuses").notNull().default(0),
    hourStrangerBytes: integer("hour_stranger_bytes").notNull().default(0),
    hourMentions: integer("hour_mentions").notNull().default(0),
    refusedHour: integer("refused_hour"),
    refusedHours: integer("refused_hours").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.day, t.sender] })],
);

/** Mail kept by the development mailer instead of being sent; tests and `npm run mail` read it. */
export const mailOutbox = sqliteTable(
  "mail_outbox",
  {
    id: text("id").primaryKey(),
    to: text("to").notNull(),
    from: text("from").notNull(),
    subject: text("subject").notNull(),
    text: text("text").notNull(),
    html: text("html").notNull(),
    createdAt: time("created_at").notNull(),
  },
  (t) => [index("mail_outbox_created").on(t.createdAt)],
);

/**
 * Files (MEDIA keys) to delete from R2 (services/file-deletions.ts): written in the batch that deletes what pointed
 * at them, deleted once R2 has deleted them. WITHOUT ROWID in the migration (0071).
 */
export const fileDeletions = sqliteTable("file_deletions", {
  key: text("key").primaryKey(),
  createdAt: time("created_at").notNull(),
});

/**
 * Mail waiting to be sent (services/mail-queue.ts): written in the batch of the action that mails, deleted once
 * sent. The effects door sends it after the answer; the cron sends what is still due from `next_at`, which each
 * failed attempt pushes back, until it gives up.
 */
export const mailQueue = sqliteTable(
  "mail_queue",
  {
    id: text("id").primaryKey(),
    from: text("from").notNull(),
    to: text("to").notNull(),
    subject: text("subject").notNull(),
    text: text("text").notNull(),
    html: text("html").notNull(),
    attempts: integer("attempts").notNull().default(0),
    nextAt: time("next_at").notNull(),
    lastError: text("last_error"),
    createdAt: time("created_at").notNull(),
  },
  (t) => [index("mail_queue_due").on(t.nextAt)],
);

/**
 * Moves whose local followers are still to be moved to the target (services/move.ts): written with the move,
 * deleted once they are. The cron retries a row left behind (a failure, or more followers than one pass moves)
 * from `next_at`, which each attempt pushes back.
 */
export const pendingMoves = sqliteTable(
  "pending_moves",
  {
    originId: text("origin_id")
      .primaryKey()
      .references(() => accounts.id, { onDelete: "cascade" }),
    attempts: integer("attempts").notNull().default(0),
    nextAt: time("next_at").notNull(),
    createdAt: time("created_at").notNull(),
  },
  (t) => [index("pending_moves_due").on(t.nextAt)],
);

/**
 * A cron job's heartbeat: when it last ran, last succeeded, and its last error (the healthcheck reports them).
 * Written when the job fails, reports what it did, or recovers; a job without a row has succeeded in every run
 * (src/services/heartbeats.ts).
 */
export const jobHeartbeats = sqliteTable(
  "job_heartbeats",
  {
    name: text("name").primaryKey(),
    lastRunAt: time("last_run_at").notNull(),
    lastSuccessAt: time("last_success_at"),
    lastError: text("last_error"),
    lastErrorAt: time("last_error_at"),
    /** What the job last reported doing (JSON), when it reports. */
    lastResult: json<Record<string, number>>("last_result"),
  },
  (t) => [
    index("job_heartbeats_failing")
      .on(t.name)
      .where(sql`last_success_at IS NOT last_run_at`),
  ],
);

/** Instance-wide secrets and keys generated once (VAPID key pair, signing secret). */
export const instanceKeys = sqliteTable("instance_keys", {
  name: text("name").primaryKey(),
  value: text("value").notNull(),
  createdAt: time("created_at").notNull(),
});

/**
 * The daily budget meter (services/usage-budget.ts): one row per UTC day (`YYYY-MM-DD`), the isolates' counts added
 * by one upsert; each `month*` column is the month's running total up to and including the day.
 */
export const usageDays = sqliteTable("usage_days", {
  day: text("day").primaryKey(),
  requests: integer("requests").notNull().default(0),
  rowsRead: integer("rows_read").notNull().default(0),
  rowsWritten: integer("rows_written").notNull().default(0),
  durableObjectRequests: integer("durable_object_requests").notNull().default(0),
  r2ClassA: integer("r2_class_a").notNull().default(0),
  r2ClassB: integer("r2_class_b").notNull().default(0),
  imageTransformations: integer("image_transformations").notNull().default(0),
  monthRequests: integer("month_requests").notNull().default(0),
  monthRowsRead: integer("month_rows_read").notNull().default(0),
  monthRowsWritten: integer("month_rows_written").notNull().default(0),
  monthDurableObjectRequests: integer("month_durable_object_requests").notNull().default(0),
  monthR2ClassA: integer("month_r2_class_a").notNull().default(0),
  monthR2ClassB: integer("month_r2_class_b").notNull().default(0),
  monthImageTransformations: integer("month_image_transformations").notNull().default(0),
  /** The GraphQL Analytics API's figures (services/usage-analytics.ts), when the host gave a token. */
  exact: text("exact"),
  /** The caps the admins were mailed about that day (JSON array of their names). */
  warned: text("warned").notNull().default("[]"),
  /** The plan (`PLAN`) of the Worker that last wrote the row: the caps the guards compare with. */
  plan: text("plan").$type<"free" | "paid">().notNull().default("free"),
  updatedAt: time("updated_at").notNull(),
});

/** Fedify's key-value store (src/federation/door/kv.ts): key = JSON array of its parts, value = JSON, expiry in ms. */
export const fedifyKv = sqliteTable(
  "fedify_kv",
  {
    key: text("key").primaryKey(),
    value: text("value").notNull(),
    expiresAt: time("expires_at"),
  },
  (t) => [
    index("fedify_kv_expires")
      .on(t.expiresAt)
      .where(sql`${t.expiresAt} IS NOT NULL`),
  ],
);

/**
 * The transactional outbox: one row per activity a local account sends, written in the action's own batch.
 * `activity` is an `OutboxActivity` (src/services/outbox.ts); `body` the built JSON-LD once expanded.
 */
export const federationOutbox = sqliteTable(
  "federation_outbox",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    activity: text("activity").notNull(),
    body: text("body"),
    createdAt: time("created_at").notNull(),
    expandedAt: time("expanded_at"),
  },
  (t) => [
    index("federation_outbox_pending")
      .on(t.id)
      .where(sql`${t.expandedAt} IS NULL`),
    // The sweep of expanded rows past their keeping time.
    index("federation_outbox_expanded")
      .on(t.expandedAt)
      .where(sql`body IS NOT NULL`),
  ],
);

/** What remains to deliver: one row per (outbox row, inbox), drained per destination host. */
export const federationDeliveries = sqliteTable(
  "federation_deliveries",
  {
    id: text("id").primaryKey(),
    outboxId: text("outbox_id").notNull(),
    host: text("host").notNull(),
    inbox: text("inbox").notNull(),
    attempts: integer("attempts").notNull().default(0),
    nextAt: time("next_at").notNull(),
    createdAt: time("created_at").notNull(),
    /** The last failed attempt, and what it answered (an HTTP status or a network error). */
    lastAttemptAt: time("last_attempt_at"),
    lastError: text("last_error"),
  },
  (t) => [
    uniqueIndex("federation_deliveries_inbox").on(t.outboxId, t.inbox),
    index("federation_deliveries_due").on(t.host, t.nextAt),
    index("federation_deliveries_next").on(t.nextAt),
  ],
);

/** Captcha tokens already answered, kept until they would have expired anyway. */
export const usedCaptchas = sqliteTable("used_captchas", {
  token: text("token").primaryKey(),
  expiresAt: time("expires_at").notNull(),
});

/** Lists of followed accounts (`list_accounts` holds the members). */
export const lists = sqliteTable(
  "lists",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    title: text("title").notNull(),
    createdAt: time("created_at").notNull(),
  },
  (t) => [index("lists_account").on(t.accountId, t.id)],
);

export const listAccounts = sqliteTable(
  "list_accounts",
  {
    id: text("id").primaryKey(),
    listId: text("list_id")
      .notNull()
      .references(() => lists.id, { onDelete: "cascade" }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    createdAt: time("created_at").notNull(),
  },
  (t) => [uniqueIndex("list_accounts_pair").on(t.listId, t.accountId), index("list_accounts_account").on(t.accountId)],
);

export type FilterContext = "home" | "notifications" | "public" | "thread";

/** Filters (Mastodon v2: a title, keywords, statuses). Expired ones are ignored on read and deleted by the cron. */
export const filters = sqliteTable(
  "filters",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    title: text("title").notNull().default(""),
    context: json<FilterContext[]>("context").notNull(),
    irreversible: bool("irreversible").notNull().default(false),
    // Mastodon 4.4's `blur` action (irreversible wins: `hide`).
    blur: bool("blur").notNull().default(false),
    expiresAt: time("expires_at"),
    createdAt: time("created_at").notNull(),
    updatedAt: time("updated_at").notNull(),
  },
  (t) => [index("filters_account").on(t.accountId), index("filters_expires").on(t.expiresAt)],
);

/** A filter's keywords (a v1 filter is one of them, under the keyword's id). */
export const filterKeywords = sqliteTable(
  "filter_keywords",
  {
    id: text("id").primaryKey(),
    filterId: text("filter_id")
      .notNull()
      .references(() => filters.id, { onDelete: "cascade" }),
    keyword: text("keyword").notNull(),
    wholeWord: bool("whole_word").notNull().default(true),
    createdAt: time("created_at").notNull(),
  },
  (t) => [index("filter_keywords_filter").on(t.filterId)],
);

/** Statuses a filter names (Mastodon 4's status filters); status deletion removes its rows. */
export const filterStatuses = sqliteTable(
  "filter_statuses",
  {
    id: text("id").primaryKey(),
    filterId: text("filter_id")
      .notNull()
      .references(() => filters.id, { onDelete: "cascade" }),
    statusId: text("status_id").notNull(),
    createdAt: time("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("filter_statuses_filter_status").on(t.filterId, t.statusId),
    index("filter_statuses_status").on(t.statusId),
  ],
);

/** Reports for moderators. */
export const reports = sqliteTable(
  "reports",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    targetAccountId: text("target_account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    statusIds: json<string[]>("status_ids").notNull().default([]),
    comment: text("comment").notNull().default(""),
    forward: bool("forward").notNull().default(false),
    state: text("state").notNull().default("open"),
    createdAt: time("created_at").notNull(),
    /** A report received from another server: its Flag's id (one report per local account it names). */
    uri: text("uri"),
  },
  (t) => [
    index("reports_target").on(t.targetAccountId),
    index("reports_account").on(t.accountId),
    index("reports_state").on(t.state, t.id),
    uniqueIndex("reports_uri")
      .on(t.uri, t.targetAccountId)
      .where(sql`uri IS NOT NULL`),
  ],
);

/**
 * Notifications of a user, newest first by id. `type` is the API's (`follow`, `pleroma:report`, …); the other
 * columns are set according to it.
 */
export const notifications = sqliteTable(
  "notifications",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    fromAccountId: text("from_account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    type: text("type").notNull(),
    statusId: text("status_id"),
    reportId: text("report_id").references(() => reports.id, { onDelete: "cascade" }),
    targetAccountId: text("target_account_id"),
    emoji: text("emoji"),
    /** `pleroma:chat_mention`: the chat message. */
    chatMessageId: text("chat_message_id"),
    isSeen: bool("is_seen").notNull().default(false),
    /** Set once Web Push delivery has taken the notification (src/services/push.ts claims it atomically). */
    pushed: bool("pushed").notNull().default(false),
    createdAt: time("created_at").notNull(),
    /** Set aside by the recipient's notification policy or the mention shield (services/notification-policy.ts). */
    filtered: bool("filtered").notNull().default(false),
    /** What it is grouped by (services/notification-groups.ts); NULL for the types never grouped. */
    groupKey: text("group_key").generatedAlwaysAs(
      sql`CASE WHEN type IN ('favourite', 'reblog', 'pleroma:emoji_reaction') AND status_id IS NOT NULL THEN type || '-' || status_id || '-' || (created_at / 43200000) WHEN type = 'follow' THEN 'follow-' || (created_at / 43200000) END`,
      { mode: "virtual" },
    ),
  },
  (t) => [
    index("notifications_account").on(t.accountId, t.id),
    index("notifications_group")
      .on(t.accountId, t.groupKey, t.filtered, t.id)
      .where(sql`group_key IS NOT NULL`),
    index("notifications_from").on(t.fromAccountId),
    // Migration 0070: the account deletion job's and a status deletion's look-ups.
    index("notifications_target")
      .on(t.targetAccountId)
      .where(sql`target_account_id IS NOT NULL`),
    index("notifications_status")
      .on(t.statusId)
      .where(sql`status_id IS NOT NULL`),
    index("notifications_report")
      .on(t.reportId)
      .where(sql`report_id IS NOT NULL`),
    index("notifications_unpushed")
      .on(t.id)
      .where(sql`pushed = 0`),
    // The unread count (markers) walks only what is unread.
    index("notifications_unseen")
      .on(t.accountId)
      .where(sql`is_seen = 0`),
  ],
);

/**
 * How many notifications each of a recipient's groups holds (`shown`: not filtered), kept by the notifications'
 * triggers (migration 0069): a grouped page reads a group's count here, not from the group index.
 */
export const notificationGroupCounts = sqliteTable(
  "notification_group_counts",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    groupKey: text("group_key").notNull(),
    shown: integer("shown").notNull().default(0),
    filtered: integer("filtered").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.groupKey] })],
);

/** A recipient's filtered notifications from one sender, waiting to be accepted or dismissed (Mastodon 4.3). */
export const notificationRequests = sqliteTable(
  "notification_requests",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    fromAccountId: text("from_account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    lastStatusId: text("last_status_id"),
    notificationsCount: integer("notifications_count").notNull().default(0),
    createdAt: time("created_at").notNull(),
    updatedAt: time("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("notification_requests_pair").on(t.accountId, t.fromAccountId),
    index("notification_requests_from").on(t.fromAccountId),
  ],
);

/** Senders whose notifications the recipient accepted: never filtered again. */
export const notificationPermissions = sqliteTable(
  "notification_permissions",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    fromAccountId: text("from_account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    createdAt: time("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.fromAccountId] }),
    index("notification_permissions_from").on(t.fromAccountId),
  ],
);

// ---- statuses ----

export type Visibility = "public" | "unlisted" | "private" | "direct" | "local" | "list";
/** Who may quote a post (Mastodon 4.5's `quote_approval_policy`). */
export type QuotePolicy = "public" | "followers" | "nobody";
export type QuoteState = "pending" | "accepted" | "rejected" | "revoked" | "deleted";
/** The interactions a remote post's `interactionPolicy` rules here (GoToSocial's `canReply`, `canLike`, `canAnnounce`). */
export type InteractionKind = "reply" | "like" | "announce";
/**
 * Who may do one interaction, as a remote post's policy says: `auto` without asking, `manual` after its author
 * approves. Entries: `public`, `followers` / `following` (its author's collections), or an actor's uri.
 */
export interface InteractionRule {
  auto: string[];
  manual: string[];
}
/** A remote post's policy, the interactions it restricts only (one left out: anyone may). */
export type InteractionRules = Partial<Record<InteractionKind, InteractionRule>>;
/** A local reply or boost of a post whose policy asks for approval (services/approval-requests.ts). */
export type ApprovalState = "pending" | "approved" | "rejected" | "denied";

/**
 * What a local user asked a remote author to approve (issue 49; GoToSocial's interaction requests): `kind`, the
 * remote post (`status_id`) and its author, the interaction (`interaction_id`: the reply's or boost's status, or
 * the favourite; `interaction_uri` its id), the request's id, and the answer (`accept_uri`, `authorization_uri`:
 * the `Accept` and the `*Authorization` it hands over, attached to the interaction sent afterwards).
 */
export const interactionRequests = sqliteTable(
  "interaction_requests",
  {
    id: text("id").primaryKey(),
    kind: text("kind").$type<InteractionKind>().notNull(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    statusId: text("status_id")
      .notNull()
      .references(() => statuses.id, { onDelete: "cascade" }),
    targetAccountId: text("target_account_id").notNull(),
    interactionId: text("interaction_id").notNull(),
    interactionUri: text("interaction_uri").notNull(),
    requestUri: text("request_uri").notNull(),
    state: text("state").$type<"pending" | "approved" | "rejected">().notNull(),
    authorizationUri: text("authorization_uri"),
    acceptUri: text("accept_uri"),
    createdAt: time("created_at").notNull(),
    updatedAt: time("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("interaction_requests_request").on(t.requestUri),
    uniqueIndex("interaction_requests_interaction").on(t.interactionId),
    index("interaction_requests_status").on(t.statusId),
    index("interaction_requests_account").on(t.accountId),
  ],
);

/**
 * Quotes (issue 46): one row per quoting status (`status_id`, local or remote) of the post it quotes
 * (`quoted_uri`; `quoted_status_id` once that post is stored here, NULL again when it is deleted). `state` is
 * FEP-044f's: pending until the quoted author's server approves (`authorization_uri`: its `QuoteAuthorization`
 * stamp, this instance's own for a local quoted post), rejected, or revoked later; `deleted` once the quoted post
 * is. `request_uri`: the
 * `QuoteRequest`'s id. Rows go with their quoting status (services/statuses.ts `deleteStatuses`).
 */
export const quotes = sqliteTable(
  "quotes",
  {
    id: text("id").primaryKey(),
    statusId: text("status_id").notNull(),
    accountId: text("account_id").notNull(),
    quotedStatusId: text("quoted_status_id"),
    quotedAccountId: text("quoted_account_id"),
    quotedUri: text("quoted_uri").notNull(),
    state: text("state").$type<QuoteState>().notNull(),
    authorizationUri: text("authorization_uri"),
    requestUri: text("request_uri"),
    createdAt: time("created_at").notNull(),
    updatedAt: time("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("quotes_status").on(t.statusId),
    index("quotes_quoted")
      .on(t.quotedStatusId, t.id)
      .where(sql`quoted_status_id IS NOT NULL`),
    index("quotes_quoted_uri").on(t.quotedUri),
    uniqueIndex("quotes_authorization")
      .on(t.authorizationUri)
      .where(sql`authorization_uri IS NOT NULL`),
    uniqueIndex("quotes_request")
      .on(t.requestUri)
      .where(sql`request_uri IS NOT NULL`),
  ],
);

/**
 * Statuses and reblogs (a reblog is a row with `reblog_of_id`). `thread_id` is the root of the thread (for
 * context, thread mutes and conversations); `local` and `has_media` are kept for timeline filters.
 */
export const statuses = sqliteTable(
  "statuses",
  {
    id: text("id").primaryKey(),
    uri: text("uri").notNull(),
    url: text("url").notNull(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    inReplyToId: text("in_reply_to_id"),
    inReplyToAccountId: text("in_reply_to_account_id"),
    reblogOfId: text("reblog_of_id"),
    threadId: text("thread_id").notNull(),
    /** ActivityPub context of the thread. */
    context: text("context").notNull(),
    content: text("content").notNull().default(""),
    /** The text as written, for `/source` and `text`. */
    text: text("text").notNull().default(""),
    contentType: text("content_type").notNull().default("text/plain"),
    spoilerText: text("spoiler_text").notNull().default(""),
    visibility: text("visibility").$type<Visibility>().notNull(),
    /** For `list` visibility: the list whose members were addressed. */
    listId: text("list_id"),
    sensitive: bool("sensitive").notNull().default(false),
    language: text("language"),
    appId: text("app_id"),
    local: bool("local").notNull(),
    hasMedia: bool("has_media").notNull().default(false),
    /** The first link of the text, whose preview card `GET /card` shows. */
    cardUrl: text("card_url"),
    /** The custom emoji of the text and spoiler as resolved when the status was written; rendered as they are. */
    emojis: json<StatusEmoji[]>("emojis").notNull().default([]),
    /** Counters: recounted from rows for local statuses; a remote status keeps what its server reports. */
    repliesCount: integer("replies_count").notNull().default(0),
    reblogsCount: integer("reblogs_count").notNull().default(0),
    favouritesCount: integer("favourites_count").notNull().default(0),
    pinnedAt: time("pinned_at"),
    expiresAt: time("expires_at"),
    createdAt: time("created_at").notNull(),
    editedAt: time("edited_at"),
    /** The row of this status in the `statuses_fts` full-text index. */
    searchRowid: integer("search_rowid"),
    /**
     * Set for statuses of accounts with many followers: they are not copied into followers' home feeds;
     * home reads pull them per followed account instead (src/services/feeds.ts).
     */
    homePull: bool("home_pull").notNull().default(false),
    /** When a remote status was stored here (its id is its publication): the retention counts from it. */
    storedAt: time("stored_at"),
    /** Who may quote it (services/quotes.ts); a remote one's as its server says, NULL when it says nothing. */
    quotePolicy: text("quote_policy").$type<QuotePolicy>(),
    /** Accepted quotes of it known here, recounted from `quotes`. */
    quotesCount: integer("quotes_count").notNull().default(0),
    /** A remote post's `interactionPolicy` for replies, likes and boosts; NULL: anyone may do all three. */
    interactionPolicy: json<InteractionRules>("interaction_policy"),
    /** A local reply or boost of such a post: whether its author approved it (NULL: nobody had to). */
    approval: text("approval").$type<ApprovalState>(),
  },
  (t) => [
    uniqueIndex("statuses_uri").on(t.uri),
    // A pasted address of a local status (a remote one is fetched and found by its uri): remote rows pay no row.
    index("statuses_url_local")
      .on(t.url)
      .where(sql`local = 1`),
    // Searched for values only, never walked for NULL: partial, so a status without one writes no index row.
    index("statuses_search")
      .on(t.searchRowid)
      .where(sql`search_rowid IS NOT NULL`),
    // An inbound post finds its thread by the conversation it names.
    index("statuses_context").on(t.context),
    // Home reads walk a followed account's pulled statuses newest first.
    index("statuses_home_pull")
      .on(t.accountId, t.id)
      .where(sql`home_pull = 1`),
    index("statuses_account").on(t.accountId, t.id),
    index("statuses_reply")
      .on(t.inReplyToId)
      .where(sql`in_reply_to_id IS NOT NULL`),
    index("statuses_thread").on(t.threadId, t.id),
    // Public and local timelines: walk ids newest first over just the statuses they can show.
    index("statuses_public_tl")
      .on(t.id)
      .where(sql`reblog_of_id IS NULL AND visibility IN ('public', 'local')`),
    // The local timeline's, holding local statuses only: a remote status pays no row for it.
    index("statuses_local_tl")
      .on(t.id)
      .where(sql`local = 1 AND reblog_of_id IS NULL AND visibility IN ('public', 'local')`),
    index("statuses_expires")
      .on(t.expiresAt)
      .where(sql`expires_at IS NOT NULL`),
    // One reblog per account and status.
    uniqueIndex("statuses_reblog")
      .on(t.accountId, t.reblogOfId)
      .where(sql`reblog_of_id IS NOT NULL`),
    index("statuses_reblog_of")
      .on(t.reblogOfId)
      .where(sql`reblog_of_id IS NOT NULL`),
  ],
);

/**
 * Accounts a status is addressed to: mentioned (`mention`: in the text, or addressed with `to[]`) or addressed
 * without a mention (the replied-to author, list members, conversation participants).
 */
export const statusRecipients = sqliteTable(
  "status_recipients",
  {
    statusId: text("status_id")
      .notNull()
      .references(() => statuses.id, { onDelete: "cascade" }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    mention: bool("mention").notNull().default(true),
  },
  (t) => [
    uniqueIndex("status_recipients_pair").on(t.statusId, t.accountId),
    index("status_recipients_account").on(t.accountId, t.statusId),
  ],
);

export const statusTags = sqliteTable(
  "status_tags",
  {
    statusId: text("status_id")
      .notNull()
      .references(() => statuses.id, { onDelete: "cascade" }),
    tag: text("tag").notNull(),
  },
  (t) => [uniqueIndex("status_tags_pair").on(t.statusId, t.tag), index("status_tags_tag").on(t.tag, t.statusId)],
);

/** Hashtags a user follows (Mastodon 4's followed tags): their public posts join the user's home timeline. */
export const followedTags = sqliteTable(
  "followed_tags",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** Normalized as `status_tags.tag` (NFC, lower case). */
    tag: text("tag").notNull(),
    createdAt: time("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("followed_tags_pair").on(t.accountId, t.tag),
    index("followed_tags_account").on(t.accountId, t.id),
  ],
);

export const mediaAttachments = sqliteTable(
  "media_attachments",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    statusId: text("status_id").references(() => statuses.id, { onDelete: "cascade" }),
    scheduledStatusId: text("scheduled_status_id"),
    /** R2 key (local) or absolute URL (remote). */
    file: text("file").notNull(),
    remoteUrl: text("remote_url"),
    mimeType: text("mime_type").notNull(),
    type: text("type").$type<"image" | "gifv" | "video" | "audio" | "unknown">().notNull(),
    description: text("description"),
    size: integer("size").notNull().default(0),
    position: integer("position").notNull().default(0),
    createdAt: time("created_at").notNull(),
    /** The chat message it is attached to (chats.ts). */
    chatMessageId: text("chat_message_id"),
    /** Taken off its (local) status by an edit: kept for the status's history, gone with the status. */
    removedByEdit: bool("removed_by_edit").notNull().default(false),
    /** A description/focal point for media on a status, waiting for the status's edit (services/uploads.ts). */
    pending: json<{ description?: string; focus?: MediaMeta["focus"] }>("pending"),
    /** The picture's size as read at upload, and the uploader's focal point (rendered as `meta`). */
    meta: json<MediaMeta>("meta"),
  },
  (t) => [
    index("media_status").on(t.statusId),
    index("media_account").on(t.accountId, t.id),
    // What the collector walks: uploads never attached to a status or a scheduled status.
    index("media_unattached")
      .on(t.createdAt)
      .where(sql`${t.statusId} IS NULL AND ${t.scheduledStatusId} IS NULL AND ${t.chatMessageId} IS NULL`),
  ],
);

/**
 * A status translated into one language at one edit version (services/translation.ts, issue 47): `translation` is
 * the stored answer (JSON: content, spoiler, poll options, media descriptions, source language, provider).
 */
export const statusTranslations = sqliteTable(
  "status_translations",
  {
    statusId: text("status_id")
      .notNull()
      .references(() => statuses.id, { onDelete: "cascade" }),
    language: text("language").notNull(),
    /** The status's `edited_at` when translated (0: never edited). */
    version: integer("version").notNull(),
    translation: json<StoredTranslation>("translation").notNull(),
    createdAt: time("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.statusId, t.language, t.version] })],
);

export interface StoredTranslation {
  content: string;
  spoilerText: string;
  poll: { id: string; options: string[] } | null;
  media: { id: string; description: string }[];
  detected: string;
  provider: string;
}

/** Workers AI neurons translation spent each UTC day (the daily budget, issue 47). */
export const translationDays = sqliteTable("translation_days", {
  day: text("day").primaryKey(),
  neurons: integer("neurons").notNull().default(0),
});

/** A version of an edited status, the original included (services/status-edits.ts, issue 31). */
export const statusEdits = sqliteTable(
  "status_edits",
  {
    id: text("id").primaryKey(),
    statusId: text("status_id")
      .notNull()
      .references(() => statuses.id, { onDelete: "cascade" }),
    content: text("content").notNull(),
    spoilerText: text("spoiler_text").notNull().default(""),
    sensitive: integer("sensitive", { mode: "boolean" }).notNull().default(false),
    emojis: json<StatusEmoji[]>("emojis").notNull().default([]),
    /** The attachments as they were: media rows as JSON (their descriptions then). */
    media: json<EditedMedia[]>("media").notNull().default([]),
    /** The poll's options then (null: no poll). */
    poll: json<{ options: string[] }>("poll"),
    createdAt: time("created_at").notNull(),
  },
  (t) => [index("status_edits_status").on(t.statusId, t.createdAt)],
);

/** What is known of an attachment's picture. */
export interface MediaMeta {
  /** The picture's or video's size; a video's or audio's frame rate ("30/1"), seconds and bits per second. */
  original?: { width?: number; height?: number; frameRate?: string; duration?: number; bitrate?: number };
  /** The thumbnail's size, when one was made (stored at `thumbnailKey(file)`). */
  small?: { width: number; height: number };
  blurhash?: string;
  /** Mastodon's focal point: x and y in -1..1, (0, 0) the centre. */
  focus?: { x: number; y: number };
}

/** An attachment as a version of a status showed it. */
export interface EditedMedia {
  id: string;
  type: "image" | "gifv" | "video" | "audio" | "unknown";
  file: string;
  remoteUrl: string | null;
  mimeType: string;
  description: string | null;
  meta?: MediaMeta | null;
}

export const polls = sqliteTable(
  "polls",
  {
    id: text("id").primaryKey(),
    statusId: text("status_id")
      .notNull()
      .references(() => statuses.id, { onDelete: "cascade" }),
    options: json<string[]>("options").notNull(),
    multiple: bool("multiple").notNull().default(false),
    hideTotals: bool("hide_totals").notNull().default(false),
    expiresAt: time("expires_at"),
    /** Set once the end has been handled (notifications of the poll's end). */
    closedAt: time("closed_at"),
    createdAt: time("created_at").notNull(),
    /** A remote poll's counts per option as its server last reported them (our own votes added since); null: local. */
    remoteTallies: json<number[]>("remote_tallies"),
    /** A remote poll's `votersCount` as last reported (our own voters added since). */
    remoteVoters: integer("remote_voters"),
  },
  (t) => [uniqueIndex("polls_status").on(t.statusId), index("polls_expires").on(t.expiresAt)],
);

export const pollVotes = sqliteTable(
  "poll_votes",
  {
    id: text("id").primaryKey(),
    pollId: text("poll_id")
      .notNull()
      .references(() => polls.id, { onDelete: "cascade" }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    choice: integer("choice").notNull(),
    createdAt: time("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("poll_votes_choice").on(t.pollId, t.accountId, t.choice),
    index("poll_votes_account").on(t.accountId),
  ],
);

/** Favourites and bookmarks: one row per account and status, paged by row id. */
const statusPairTable = <C extends Record<string, any>>(name: string, extra: C) =>
  sqliteTable(
    name,
    {
      id: text("id").primaryKey(),
      accountId: text("account_id")
        .notNull()
        .references(() => accounts.id, { onDelete: "cascade" }),
      statusId: text("status_id")
        .notNull()
        .references(() => statuses.id, { onDelete: "cascade" }),
      createdAt: time("created_at").notNull(),
      ...extra,
    },
    (t) => [
      uniqueIndex(`${name}_pair`).on(t.accountId, t.statusId),
      index(`${name}_status`).on(t.statusId, t.id),
      index(`${name}_account`).on(t.accountId, t.id),
      ...("uri" in extra ? [uniqueIndex(`${name}_uri`).on((t as any).uri)] : []),
    ],
  );
/** A favourite is a Like. */
export const favourites = statusPairTable("favourites", { ...activityUri() });

export const bookmarks = statusPairTable("bookmarks", {});

export const emojiReactions = sqliteTable(
  "emoji_reactions",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    statusId: text("status_id")
      .notNull()
      .references(() => statuses.id, { onDelete: "cascade" }),
    /** A unicode emoji, or a custom emoji's shortcode without colons. */
    emoji: text("emoji").notNull(),
    createdAt: time("created_at").notNull(),
    ...activityUri(),
  },
  (t) => [
    uniqueIndex("emoji_reactions_triple").on(t.statusId, t.accountId, t.emoji),
    index("emoji_reactions_account").on(t.accountId),
    uniqueIndex("emoji_reactions_uri").on(t.uri),
  ],
);

export const threadMutes = sqliteTable(
  "thread_mutes",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    threadId: text("thread_id").notNull(),
    expiresAt: time("expires_at"),
    createdAt: time("created_at").notNull(),
  },
  (t) => [uniqueIndex("thread_mutes_pair").on(t.accountId, t.threadId), index("thread_mutes_expires").on(t.expiresAt)],
);

/** `Idempotency-Key`s of recent posts, per user. */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    /** What the first request made: `status:<id>` or `scheduled:<id>`. */
    result: text("result").notNull(),
    createdAt: time("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("idempotency_keys_pair").on(t.accountId, t.key),
    index("idempotency_keys_created").on(t.createdAt),
  ],
);

export const scheduledStatuses = sqliteTable(
  "scheduled_statuses",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    scheduledAt: time("scheduled_at").notNull(),
    /** The posting parameters, as validated, for the cron to post. */
    params: json<Record<string, unknown>>("params").notNull(),
    appId: text("app_id"),
    createdAt: time("created_at").notNull(),
    /** Runs that failed to post it for a transient reason; it is dropped after `MAX_ATTEMPTS`. */
    attempts: integer("attempts").notNull().default(0),
    lastError: text("last_error"),
  },
  (t) => [index("scheduled_due").on(t.scheduledAt), index("scheduled_account").on(t.accountId, t.scheduledAt)],
);

/** Direct-message conversations: one per thread, and a participation per local account in it. */
export const conversations = sqliteTable(
  "conversations",
  {
    id: text("id").primaryKey(),
    threadId: text("thread_id").notNull(),
    createdAt: time("created_at").notNull(),
  },
  (t) => [uniqueIndex("conversations_thread").on(t.threadId)],
);

export const participations = sqliteTable(
  "participations",
  {
    id: text("id").primaryKey(),
    conversationId: text("conversation_id")
      .notNull()
      .references(() => conversations.id, { onDelete: "cascade" }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** Accounts addressed when this user replies; changed only by the user. */
    recipients: json<string[]>("recipients").notNull().default([]),
    unread: bool("unread").notNull().default(true),
    lastStatusId: text("last_status_id"),
    updatedAt: time("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("participations_pair").on(t.conversationId, t.accountId),
    index("participations_account").on(t.accountId, t.updatedAt),
  ],
);

/** Custom emoji, one per (shortcode, domain): `domain` null for this instance's, else the server it came from. */
export const customEmojis = sqliteTable(
  "custom_emojis",
  {
    shortcode: text("shortcode").notNull(),
    domain: text("domain"),
    /** R2 key (local) or absolute URL (remote). */
    file: text("file").notNull(),
    /** A remote emoji's image URL as its server names it; null for local ones. */
    url: text("url"),
    category: text("category"),
    visibleInPicker: bool("visible_in_picker").notNull().default(true),
    createdAt: time("created_at").notNull(),
  },
  (t) => [
    // NULLs are distinct in a unique index: the local domain is keyed as ''.
    uniqueIndex("custom_emojis_key").on(t.shortcode, sql`ifnull(${t.domain}, '')`),
    // The listing reads this instance's emoji in shortcode order without walking remote ones.
    index("custom_emojis_local")
      .on(t.shortcode)
      .where(sql`domain IS NULL`),
    // A pack's files (category = pack name) in shortcode order.
    index("custom_emojis_pack")
      .on(t.category, t.shortcode)
      .where(sql`domain IS NULL`),
  ],
);

/**
 * Emoji packs (migration 0020, by hand): a pack's emoji are this instance's `custom_emojis` rows whose
 * `category` is its name, files under `emoji/<name>/` in R2. Metadata columns are null when unset.
 */
export const emojiPacks = sqliteTable("emoji_packs", {
  name: text("name").primaryKey(),
  license: text("license"),
  homepage: text("homepage"),
  description: text("description"),
  fallbackSrc: text("fallback_src"),
  fallbackSrcSha256: text("fallback_src_sha256"),
  shareFiles: bool("share_files"),
  createdAt: time("created_at").notNull(),
  updatedAt: time("updated_at").notNull(),
});

/**
 * Relays the instance follows (issue 36, migration 0039): `kind` `litepub` (the instance actor follows the relay's
 * actor, which Announces posts) or `mastodon` (a Follow of the public collection to the relay's inbox, which
 * forwards Creates); NULL until `url` is looked up. `state`: pending, accepted, rejected, or removing (an unfollow
 * the cron has still to send). `followed_back`: the relay follows the instance actor (LitePub).
 */
export const relays = sqliteTable(
  "relays",
  {
    id: text("id").primaryKey(),
    url: text("url").notNull(),
    kind: text("kind").$type<"litepub" | "mastodon">(),
    actorUri: text("actor_uri"),
    inboxUrl: text("inbox_url"),
    followUri: text("follow_uri"),
    state: text("state")
      .$type<"pending" | "accepted" | "rejected" | "removing" | "failed">()
      .notNull()
      .default("pending"),
    followedBack: integer("followed_back", { mode: "boolean" }).notNull().default(false),
    /** The cron's failed look-ups of a row not followed yet (0041): backed off, `failed` after `RELAY_ATTEMPTS`. */
    attempts: integer("attempts").notNull().default(0),
    createdAt: time("created_at").notNull(),
    updatedAt: time("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("relays_url").on(t.url),
    uniqueIndex("relays_follow_uri").on(t.followUri),
    index("relays_state").on(t.state),
  ],
);

/** Other servers: their shared inbox, software, and how delivery to them goes (failures since the last success). */
export const instances = sqliteTable(
  "instances",
  {
    domain: text("domain").primaryKey(),
    sharedInbox: text("shared_inbox"),
    softwareName: text("software_name"),
    softwareVersion: text("software_version"),
    failureCount: integer("failure_count").notNull().default(0),
    lastFailureAt: time("last_failure_at"),
    lastSuccessAt: time("last_success_at"),
    /** Set when a delivery to the host was given up after its retries (about two days); a success clears it. */
    failingSince: time("failing_since"),
    /**
     * When the host's current run of failed deliveries began (a success clears it). Failing for over a day, the
     * host is only probed, one delivery every few hours (federation/delivery/).
     */
    unreachableSince: time("unreachable_since"),
    /** The favicon its home page names (`link rel=icon`), or null; learned by the cron (services/instance-favicons.ts). */
    favicon: text("favicon"),
    /** When the favicon was last looked for; null: not yet. */
    faviconFetchedAt: time("favicon_fetched_at"),
    /**
     * The HTTP signature scheme the host accepted last (`rfc9421` or `draft-cavage-http-signatures-12`); null: not
     * known yet. Written only when it changes (federation/door/signature-specs.ts).
     */
    signatureSpec: text("signature_spec"),
    createdAt: time("created_at").notNull(),
  },
  (t) => [
    index("instances_favicon_due").on(t.faviconFetchedAt, t.createdAt),
    // Unreachable hosts not marked failing yet (delivery's sweep marks them).
    index("instances_unreachable_unmarked")
      .on(t.unreachableSince)
      .where(sql`unreachable_since IS NOT NULL AND failing_since IS NULL`),
  ],
);

/**
 * Figures kept as they change (one row, id 1), so reading them costs a row: `domains`, the distinct domains of
 * remote accounts (the instance's peers), kept by triggers on `accounts` (migrations/0048_cheaper_reads.sql).
 */
export const instanceCounts = sqliteTable("instance_counts", {
  id: integer("id").primaryKey(),
  domains: integer("domains").notNull(),
});

/** Link previews, fetched once per URL. `title` null means the page gave no card. */
export const linkCards = sqliteTable("link_cards", {
  url: text("url").primaryKey(),
  data: json<Record<string, unknown>>("data"),
  fetchedAt: time("fetched_at").notNull(),
});

/**
 * Home timelines, fanned out on write: one row per (owner, status) for the author, local followers and
 * addressed local users. `author_id` is who put it there (the reblogger for a reblog), for list timelines.
 */
export const homeFeed = sqliteTable(
  "home_feed",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    statusId: text("status_id")
      .notNull()
      .references(() => statuses.id, { onDelete: "cascade" }),
    authorId: text("author_id").notNull(),
  },
  (t) => [uniqueIndex("home_feed_pair").on(t.accountId, t.statusId), index("home_feed_status").on(t.statusId)],
);

/**
 * Reading positions (`home`, `notifications`) per user. The trigger `notifications_marker` (migration
 * 0009_notifications.sql, not expressible here) creates the `notifications` marker with the user's first
 * notification, as Pleroma does.
 */
export const markers = sqliteTable(
  "markers",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    timeline: text("timeline").notNull(),
    lastReadId: text("last_read_id").notNull(),
    version: integer("version").notNull().default(0),
    updatedAt: time("updated_at").notNull(),
  },
  (t) => [uniqueIndex("markers_pair").on(t.accountId, t.timeline)],
);

/** Web Push subscriptions: one per access token (a new one replaces the old; revoking the token removes it). */
export const pushSubscriptions = sqliteTable(
  "push_subscriptions",
  {
    id: text("id").primaryKey(),
    tokenId: text("token_id")
      .notNull()
      .references(() => tokens.id, { onDelete: "cascade" }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    endpoint: text("endpoint").notNull(),
    p256dh: text("p256dh").notNull(),
    auth: text("auth").notNull(),
    alerts: json<Record<string, boolean>>("alerts").notNull(),
    createdAt: time("created_at").notNull(),
  },
  (t) => [uniqueIndex("push_subscriptions_token").on(t.tokenId), index("push_subscriptions_account").on(t.accountId)],
);

/**
 * Who is listening, as the streaming Durable Objects report it: one row per object and subscribed stream
 * (`stream` a stream name such as `user` or `hashtag`, `arg` its tag, list id or instance, else ''), with the
 * listening account and token ('' for anonymous connections): a revoked token's connections get nothing more. Publishing joins this table with the timeline rules, so an
 * event reaches only objects with a connection that may see it, and users with none cost no object call.
 * Rows of an object that restarted without closing its sockets are removed when a delivery finds no listener.
 */
export const streamPresence = sqliteTable(
  "stream_presence",
  {
    object: text("object").notNull(),
    accountId: text("account_id").notNull(),
    tokenId: text("token_id").notNull(),
    stream: text("stream").notNull(),
    arg: text("arg").notNull(),
    createdAt: time("created_at").notNull(),
    /** When the object last wrote its presence (every sync refreshes all its rows); the collector asks objects silent for long. */
    seenAt: time("seen_at").notNull().default(0),
  },
  (t) => [
    uniqueIndex("stream_presence_key").on(t.object, t.tokenId, t.stream, t.arg),
    index("stream_presence_stream").on(t.stream, t.arg),
    index("stream_presence_account").on(t.accountId, t.stream),
    index("stream_presence_seen").on(t.seenAt),
  ],
);

/**
 * What staff did, for the admin API's moderation log. `data` keeps what the entry is about as it was (nicknames,
 * ids, values), so an entry still reads correctly after its subject is gone. The actor is kept as an id and a
 * nickname for the same reason (no foreign key: deleting an admin keeps their log).
 */
export const moderationLog = sqliteTable(
  "moderation_log",
  {
    id: text("id").primaryKey(),
    actorId: text("actor_id").notNull(),
    action: text("action").notNull(),
    data: json<Record<string, unknown>>("data").notNull().default({}),
    createdAt: time("created_at").notNull(),
  },
  (t) => [index("moderation_log_actor").on(t.actorId, t.id)],
);

/** MFA backup codes: SHA-256 of `account id:code`, one row each, deleted when used (single use). */
export const mfaBackupCodes = sqliteTable(
  "mfa_backup_codes",
  {
    codeHash: text("code_hash").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    createdAt: time("created_at").notNull(),
  },
  (t) => [index("mfa_backup_codes_account").on(t.accountId)],
);

/**
 * The second step of an MFA sign-in: a digest of the `mfa_token` the password step answered, bound to the user, the
 * app and the scopes it asked for; five minutes, a few code attempts, deleted when exchanged.
 */
export const mfaTokens = sqliteTable(
  "mfa_tokens",
  {
    tokenHash: text("token_hash").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** NULL: a sign-in of the browser page (no app; migration 0040), redeemed only there. */
    appId: text("app_id").references(() => apps.id, { onDelete: "cascade" }),
    scopes: text("scopes").notNull(),
    attempts: integer("attempts").notNull().default(0),
    createdAt: time("created_at").notNull(),
    expiresAt: time("expires_at").notNull(),
  },
  (t) => [index("mfa_tokens_expires").on(t.expiresAt), index("mfa_tokens_account").on(t.accountId)],
);

/** Password reset links: a digest of the token, single use (deleted when used), expiring. */
export const passwordResetTokens = sqliteTable(
  "password_reset_tokens",
  {
    tokenHash: text("token_hash").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    createdAt: time("created_at").notNull(),
    expiresAt: time("expires_at").notNull(),
  },
  (t) => [
    index("password_reset_tokens_expires").on(t.expiresAt),
    index("password_reset_tokens_account").on(t.accountId),
  ],
);

/**
 * Chats (src/services/chats.ts): one row per unordered pair, `a_id` < `b_id`. Each side has its unread count,
 * last read message, a `cleared` mark (messages up to it are gone for that side after it deleted the chat) and
 * `open` (listed). `sort_key` orders the chat lists: an id made at the chat's last update.
 */
export const chats = sqliteTable(
  "chats",
  {
    id: text("id").primaryKey(),
    aId: text("a_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    bId: text("b_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    aUnread: integer("a_unread").notNull().default(0),
    bUnread: integer("b_unread").notNull().default(0),
    aLastReadId: text("a_last_read_id"),
    bLastReadId: text("b_last_read_id"),
    aClearedId: text("a_cleared_id"),
    bClearedId: text("b_cleared_id"),
    aOpen: bool("a_open").notNull().default(true),
    bOpen: bool("b_open").notNull().default(true),
    lastMessageId: text("last_message_id"),
    sortKey: text("sort_key").notNull(),
    createdAt: time("created_at").notNull(),
    updatedAt: time("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("chats_pair").on(t.aId, t.bId),
    index("chats_a").on(t.aId, t.sortKey),
    index("chats_b").on(t.bId, t.sortKey),
  ],
);

/** Chat messages, written only by the chat's ChatRoom object (src/objects/chat-room.ts). `unread`: by the recipient. */
export const chatMessages = sqliteTable(
  "chat_messages",
  {
    id: text("id").primaryKey(),
    chatId: text("chat_id")
      .notNull()
      .references(() => chats.id, { onDelete: "cascade" }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** HTML: escaped text with links. */
    content: text("content").notNull().default(""),
    emojis: json<StatusEmoji[]>("emojis").notNull().default([]),
    mediaId: text("media_id"),
    unread: bool("unread").notNull().default(true),
    /** ActivityPub id of a remote message (local ones derive theirs from the id). */
    uri: text("uri"),
    idempotencyKey: text("idempotency_key"),
    idempotencyAt: time("idempotency_at"),
    createdAt: time("created_at").notNull(),
  },
  (t) => [
    index("chat_messages_chat").on(t.chatId, t.id),
    index("chat_messages_idempotency")
      .on(t.chatId, t.accountId, t.idempotencyKey)
      .where(sql`idempotency_key IS NOT NULL`),
    uniqueIndex("chat_messages_uri")
      .on(t.uri)
      .where(sql`uri IS NOT NULL`),
  ],
);

/**
 * Account deletions under way (services/account-deletion.ts): the account is deactivated at once and emptied by
 * the cron in bounded steps; the row stays, finished, as the record that the account was deleted.
 */
export const accountDeletions = sqliteTable(
  "account_deletions",
  {
    accountId: text("account_id").primaryKey(),
    /** Who asked: the account itself, or the admin who deleted it. */
    requestedBy: text("requested_by"),
    statusesDeleted: integer("statuses_deleted").notNull().default(0),
    requestedAt: time("requested_at").notNull(),
    updatedAt: time("updated_at").notNull(),
    finishedAt: time("finished_at"),
    /** Set once a pass over the other tables found nothing left (the job then waits for the Delete's delivery). */
    rowsClearedAt: time("rows_cleared_at"),
  },
  (t) => [
    index("account_deletions_pending")
      .on(t.requestedAt)
      .where(sql`${t.finishedAt} IS NULL`),
  ],
);

/** Pleroma backups: an account's archive (zip of ActivityStreams JSON), built by the cron into R2, kept a week. */
export const backups = sqliteTable(
  "backups",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** pending → complete (or failed). */
    state: text("state").notNull().default("pending"),
    /** The R2 key of the archive. */
    fileKey: text("file_key").notNull(),
    size: integer("size").notNull().default(0),
    /** The origin the client asked through: the mailed link's, when no DOMAIN is configured. */
    base: text("base").notNull().default(""),
    createdAt: time("created_at").notNull(),
    processedAt: time("processed_at"),
    /** Builds started (counted when claimed, migration 0070): failed after MAX_ATTEMPTS. */
    attempts: integer("attempts").notNull().default(0),
    /** Until when the run that claimed it may still be building it. */
    leaseUntil: time("lease_until"),
  },
  (t) => [
    index("backups_account").on(t.accountId, t.id),
    index("backups_pending")
      .on(t.createdAt)
      .where(sql`${t.state} = 'pending'`),
  ],
);

/** Uploaded Mastodon or Pleroma archives being imported by the cron (issue 50; services/archive-import.ts). */
export const archiveImports = sqliteTable(
  "archive_imports",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** queued (the zip stored) → importing (its posts read) → done, or failed (`error`). */
    state: text("state").notNull().default("queued"),
    /** The zip's key in the PRIVATE bucket (deleted when the import ends). */
    fileKey: text("file_key").notNull(),
    size: integer("size").notNull().default(0),
    /** The origin the upload came through: the new statuses' ids are made from it when no DOMAIN is set. */
    base: text("base").notNull().default(""),
    /** Posts in the archive's outbox, and those it will import (its own posts and self-replies). */
    found: integer("found").notNull().default(0),
    total: integer("total").notNull().default(0),
    /** How many of `total` are handled: where the next step starts. */
    position: integer("position").notNull().default(0),
    imported: integer("imported").notNull().default(0),
    media: integer("media").notNull().default(0),
    mediaSkipped: integer("media_skipped").notNull().default(0),
    /** Posts left out, by reason (JSON). */
    skipped: text("skipped").notNull().default("{}"),
    /** Why the import waits (the day's budget, the database's room), while it does. */
    paused: text("paused"),
    error: text("error"),
    /** Steps in a row that failed (given up at a few). */
    attempts: integer("attempts").notNull().default(0),
    /** Until when a step holds the import (overlapping cron runs: one step at a time). */
    leaseUntil: time("lease_until"),
    createdAt: time("created_at").notNull(),
    updatedAt: time("updated_at").notNull(),
  },
  (t) => [
    index("archive_imports_account").on(t.accountId, t.id),
    index("archive_imports_active")
      .on(t.id)
      .where(sql`state IN ('queued', 'importing')`),
  ],
);

/** Which status an archive's post became, by the post's original id (WITHOUT ROWID in migration 0060). */
export const importedStatuses = sqliteTable(
  "imported_statuses",
  {
    accountId: text("account_id").notNull(),
    originalUri: text("original_uri").notNull(),
    statusId: text("status_id")
      .notNull()
      .references(() => statuses.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.originalUri] }), index("imported_statuses_status").on(t.statusId)],
);

/** Notes staff leave on a report (the admin API; migration 0023). */
export const reportNotes = sqliteTable(
  "report_notes",
  {
    id: text("id").primaryKey(),
    reportId: text("report_id")
      .notNull()
      .references(() => reports.id, { onDelete: "cascade" }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    content: text("content").notNull(),
    createdAt: time("created_at").notNull(),
  },
  (t) => [index("report_notes_report").on(t.reportId, t.id)],
);

/** Instance settings an admin changed at run time (src/services/instance-settings.ts): they override `[vars]`. */
export const instanceSettings = sqliteTable("instance_settings", {
  key: text("key").primaryKey(),
  value: json<unknown>("value").notNull(),
  updatedAt: time("updated_at").notNull(),
});

/** One file of an installed frontend: its path inside the build, content type and size. */
export interface FrontendFile {
  path: string;
  type: string;
  size: number;
}

/** Installed frontends (services/frontends.ts): the build in R2 that serves each name and ref. */
export const frontends = sqliteTable(
  "frontends",
  {
    name: text("name").notNull(),
    ref: text("ref").notNull(),
    build: text("build").notNull(),
    files: json<FrontendFile[]>("files").notNull(),
    bytes: integer("bytes").notNull(),
    installedAt: time("installed_at").notNull(),
    /** The build this one replaced, kept (not swept) for an hour after `replacedAt`. */
    previousBuild: text("previous_build"),
    replacedAt: time("replaced_at"),
  },
  (t) => [primaryKey({ columns: [t.name, t.ref] })],
);

/** Federation policies per remote domain (Pleroma's `:mrf_simple`): `reject`, `accept`, `media_removal`… */
export const federationPolicies = sqliteTable(
  "federation_policies",
  {
    domain: text("domain").notNull(),
    policy: text("policy").notNull(),
    reason: text("reason").notNull().default(""),
    createdAt: time("created_at").notNull(),
    /** Where the rule came from: `hand`, `import` or `subscription:<id>` (services/domain-rules.ts). */
    source: text("source").notNull().default("hand"),
  },
  (t) => [primaryKey({ columns: [t.domain, t.policy] }), index("federation_policies_policy").on(t.policy, t.domain)],
);

/**
 * Blocklists (or allow-lists) the cron fetches daily (services/domain-subscriptions.ts), GoToSocial's domain
 * permission subscriptions: what they make is written with `source` `subscription:<id>`.
 */
export const domainSubscriptions = sqliteTable(
  "domain_subscriptions",
  {
    id: text("id").primaryKey(),
    title: text("title").notNull().default(""),
    uri: text("uri").notNull(),
    contentType: text("content_type").notNull(),
    permissionType: text("permission_type").$type<"block" | "allow">().notNull(),
    priority: integer("priority").notNull().default(0),
    asDraft: bool("as_draft").notNull().default(true),
    removeRetracted: bool("remove_retracted").notNull().default(true),
    createdBy: text("created_by").notNull(),
    createdAt: time("created_at").notNull(),
    etag: text("etag"),
    lastModified: text("last_modified"),
    fetchedAt: time("fetched_at"),
    successfullyFetchedAt: time("successfully_fetched_at"),
    nextFetchAt: time("next_fetch_at").notNull(),
    count: integer("count").notNull().default(0),
    error: text("error"),
  },
  (t) => [uniqueIndex("domain_subscriptions_uri").on(t.uri), index("domain_subscriptions_due").on(t.nextFetchAt)],
);

/** What a Mastodon domain block holds beside its policies (services/domain-rules.ts). */
export const domainRuleNotes = sqliteTable("domain_rule_notes", {
  domain: text("domain").primaryKey(),
  privateComment: text("private_comment").notNull().default(""),
  obfuscate: bool("obfuscate").notNull().default(false),
});

/** Administrators' announcements (`/api/v1/announcements`); `content` is the text as written. */
export const announcements = sqliteTable("announcements", {
  id: text("id").primaryKey(),
  content: text("content").notNull(),
  startsAt: time("starts_at"),
  endsAt: time("ends_at"),
  allDay: bool("all_day").notNull().default(false),
  createdAt: time("created_at").notNull(),
  updatedAt: time("updated_at").notNull(),
});

/** Announcements a user dismissed (`read`). */
export const announcementReads = sqliteTable(
  "announcement_reads",
  {
    announcementId: text("announcement_id")
      .notNull()
      .references(() => announcements.id, { onDelete: "cascade" }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
  },
  (t) => [
    primaryKey({ columns: [t.announcementId, t.accountId] }),
    index("announcement_reads_account").on(t.accountId),
  ],
);

/** Mastodon 4.3's severed relationships (migration 0062, services/severed-relationships.ts): what severed follows. */
export const relationshipSeveranceEvents = sqliteTable("relationship_severance_events", {
  id: text("id").primaryKey(),
  /** `domain_block`, `user_domain_block` or `account_suspension`. */
  type: text("type").notNull(),
  /** The domain (or account) blocked. */
  targetName: text("target_name").notNull(),
  purged: bool("purged").notNull().default(false),
  createdAt: time("created_at").notNull(),
});

/** One per local account and event: what it lost. The id is its `severed_relationships` notification's. */
export const severedRelationships = sqliteTable(
  "severed_relationships",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    eventId: text("event_id")
      .notNull()
      .references(() => relationshipSeveranceEvents.id, { onDelete: "cascade" }),
    followersCount: integer("followers_count").notNull().default(0),
    followingCount: integer("following_count").notNull().default(0),
    /** JSON: the lost followers' addresses (`user@host`). */
    followers: text("followers").notNull().default("[]"),
    /** JSON: the lost follows, `{acct, show_reblogs, notify}`. */
    following: text("following").notNull().default("[]"),
    createdAt: time("created_at").notNull(),
  },
  (t) => [
    index("severed_relationships_account").on(t.accountId, t.id),
    index("severed_relationships_event").on(t.eventId),
  ],
);
