import { z } from "@hono/zod-openapi";
import { AccountSchema } from "./account";

const limits = {
  max_toot_chars: z.number().int(),
  max_media_attachments: z.number().int(),
  chat_limit: z.number().int(),
  description_limit: z.number().int(),
  upload_limit: z.number().int(),
  avatar_upload_limit: z.number().int(),
  background_upload_limit: z.number().int(),
  banner_upload_limit: z.number().int(),
};

const PollLimitsSchema = z.object({
  max_options: z.number().int(),
  max_option_chars: z.number().int(),
  min_expiration: z.number().int(),
  max_expiration: z.number().int(),
});

export const InstanceSchema = z
  .object({
    uri: z.string(),
    title: z.string(),
    description: z.string(),
    short_description: z.string(),
    version: z.string(),
    email: z.string(),
    urls: z.object({ streaming_api: z.string() }),
    stats: z.object({ user_count: z.number().int(), status_count: z.number().int(), domain_count: z.number().int() }),
    thumbnail: z.string(),
    languages: z.array(z.string()),
    registrations: z.boolean(),
    approval_required: z.boolean(),
    invites_enabled: z.boolean(),
    poll_limits: PollLimitsSchema,
    background_image: z.string(),
    configuration: z.object({
      statuses: z.object({ max_characters: z.number().int(), max_media_attachments: z.number().int() }),
      media_attachments: z.object({
        supported_mime_types: z.array(z.string()),
        image_size_limit: z.number().int(),
        video_size_limit: z.number().int(),
        description_limit: z.number().int(),
      }),
      polls: z.object({
        max_options: z.number().int(),
        max_characters_per_option: z.number().int(),
        min_expiration: z.number().int(),
        max_expiration: z.number().int(),
      }),
      accounts: z.object({ max_profile_fields: z.number().int() }),
    }),
    vapid_public_key: z.string(),
    ...limits,
    pleroma: z.object({
      metadata: z.object({
        account_activation_required: z.boolean(),
        features: z.array(z.string()),
        federation: z.object({
          enabled: z.boolean(),
          exclusions: z.boolean(),
          mrf_policies: z.array(z.string()),
          mrf_simple: z.record(z.string(), z.array(z.string())),
          mrf_simple_info: z.record(z.string(), z.record(z.string(), z.object({ reason: z.string() }))),
          quarantined_instances: z.array(z.string()),
          quarantined_instances_info: z.object({
            quarantined_instances: z.record(z.string(), z.object({ reason: z.string() })),
          }),
        }),
        fields_limits: z.object({
          max_fields: z.number().int(),
          max_remote_fields: z.number().int(),
          name_length: z.number().int(),
          value_length: z.number().int(),
        }),
        archive_limits: z.object({
          max_entries: z.number().int(),
          max_uncompressed_bytes: z.number().int(),
          max_file_bytes: z.number().int(),
        }),
        post_formats: z.array(z.string()),
      }),
      stats: z.object({ mau: z.number().int() }),
      vapid_public_key: z.string(),
    }),
  })
  .openapi("Instance");

export const NodeinfoSchema = z
  .object({
    version: z.enum(["2.0", "2.1"]),
    software: z.object({
      name: z.literal("pleroma"),
      version: z.string(),
      repository: z.string().optional(),
      homepage: z.string().optional(),
    }),
    protocols: z.array(z.string()),
    services: z.object({ inbound: z.array(z.string()), outbound: z.array(z.string()) }),
    openRegistrations: z.boolean(),
    usage: z.object({
      users: z.object({ total: z.number().int(), activeMonth: z.number().int(), activeHalfyear: z.number().int() }),
      localPosts: z.number().int(),
    }),
    metadata: z.record(z.string(), z.unknown()),
  })
  .openapi("Nodeinfo");

/** A cap of the daily budget meter (services/usage-budget.ts): used in its period against what the plan allows. */
const BudgetCapSchema = z.object({
  used: z.number(),
  limit: z.number(),
  period: z.enum(["day", "month"]),
  percent: z.number(),
});
const BUDGET_STATUS = z.enum(["ok", "warning", "critical"]);
/** The budget meter as admins see it (admin `stats`, the healthcheck); anyone else sees `BudgetStatusSchema`. */
export const BudgetSchema = z
  .object({
    status: BUDGET_STATUS,
    plan: z.enum(["free", "paid"]),
    day: z.string(),
    source: z.enum(["exact", "estimate"]),
    percent: z.number(),
    pausing_fetches: z.boolean(),
    refusing_unsolicited: z.boolean(),
    updated_at: z.string().nullable(),
    exact_at: z.string().nullable(),
    exact_error: z.string().nullable(),
    caps: z.object({
      requests: BudgetCapSchema,
      rows_read: BudgetCapSchema,
      rows_written: BudgetCapSchema,
      durable_object_requests: BudgetCapSchema,
      r2_class_a: BudgetCapSchema,
      r2_class_b: BudgetCapSchema,
      image_transformations: BudgetCapSchema,
    }),
  })
  .strict()
  .openapi("Budget");
export const BudgetStatusSchema = z.object({ status: BUDGET_STATUS }).strict();

/** What one remote sender made this instance store today (admin `stats`' `inbound_senders`). */
const SenderFigures = {
  statuses: z.number().int(),
  bytes: z.number().int(),
  /** Of which by actors nobody here follows (for an actor: all of it when nobody here followed it). */
  unfollowed_statuses: z.number().int(),
  unfollowed_bytes: z.number().int(),
  /** Hours of today in which something it sent was refused over the inbound limits. */
  refused_hours: z.number().int(),
};
export const InboundSendersSchema = z
  .object({
    day: z.string(),
    hosts: z.array(z.object({ host: z.string(), ...SenderFigures }).strict()),
    actors: z.array(
      z
        .object({ uri: z.string(), account_id: z.string().nullable(), acct: z.string().nullable(), ...SenderFigures })
        .strict(),
    ),
  })
  .strict()
  .openapi("InboundSenders");

export const HealthcheckSchema = z
  .object({
    pool_size: z.number().int(),
    active: z.number().int(),
    idle: z.number().int(),
    memory_used: z.number().nullable(),
    healthy: z.boolean(),
    job_queue_stats: z.record(z.string(), z.unknown()),
  })
  .openapi("Healthcheck");

/** Mastodon 4's Instance (`/api/v2/instance`), with Pleroma's `pleroma` extension. */
export const InstanceV2Schema = z
  .object({
    domain: z.string(),
    title: z.string(),
    version: z.string(),
    source_url: z.string(),
    api_versions: z.object({ mastodon: z.number().int() }),
    description: z.string(),
    usage: z.object({ users: z.object({ active_month: z.number().int() }) }),
    thumbnail: z.object({ url: z.string() }),
    icon: z.array(z.object({ src: z.string(), size: z.string() })),
    languages: z.array(z.string()),
    configuration: z.object({
      urls: z.object({ streaming: z.string() }),
      vapid: z.object({ public_key: z.string() }),
      accounts: z.object({ max_featured_tags: z.number().int(), max_pinned_statuses: z.number().int() }),
      statuses: z.object({
        max_characters: z.number().int(),
        max_media_attachments: z.number().int(),
        characters_reserved_per_url: z.number().int(),
      }),
      media_attachments: z.object({
        supported_mime_types: z.array(z.string()),
        image_size_limit: z.number().int(),
        video_size_limit: z.number().int(),
        description_limit: z.number().int(),
      }),
      polls: z.object({
        max_options: z.number().int(),
        max_characters_per_option: z.number().int(),
        min_expiration: z.number().int(),
        max_expiration: z.number().int(),
      }),
      translation: z.object({ enabled: z.boolean() }),
    }),
    registrations: z.object({
      enabled: z.boolean(),
      approval_required: z.boolean(),
      reason_required: z.boolean(),
      min_age: z.number().int().nullable(),
      message: z.string().nullable(),
      url: z.string().nullable(),
    }),
    contact: z.object({ email: z.string(), account: z.null() }),
    rules: z.array(z.lazy(() => RuleSchema)),
    pleroma: z.object({
      metadata: z.object({ features: z.array(z.string()), post_formats: z.array(z.string()) }).passthrough(),
      stats: z.object({ mau: z.number().int() }),
      vapid_public_key: z.string(),
    }),
  })
  .openapi("InstanceV2");

export const RuleSchema = z.object({ id: z.string(), text: z.string(), hint: z.string() }).openapi("Rule");

/** An announcement by the administrators (none exist yet: the list is empty). */
export const AnnouncementSchema = z
  .object({
    id: z.string(),
    content: z.string(),
    starts_at: z.string().nullable(),
    ends_at: z.string().nullable(),
    all_day: z.boolean(),
    published_at: z.string(),
    updated_at: z.string(),
    read: z.boolean(),
    mentions: z.array(z.unknown()),
    statuses: z.array(z.unknown()),
    tags: z.array(z.unknown()),
    emojis: z.array(z.unknown()),
    reactions: z.array(z.unknown()),
    pleroma: z.object({ raw_content: z.string() }).optional(),
  })
  .openapi("Announcement");

/** A hashtag with its daily use (trends, followed tags). Figures are strings, as Mastodon sends them. */
const TagHistorySchema = z.object({ day: z.string(), uses: z.string(), accounts: z.string() });
export const TrendTagSchema = z
  .object({ name: z.string(), url: z.string(), history: z.array(TagHistorySchema), following: z.boolean().optional() })
  .openapi("Tag");

export const FeaturedTagSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    url: z.string(),
    statuses_count: z.number().int(),
    last_status_at: z.string().nullable(),
  })
  .openapi("FeaturedTag");

/** `/api/pleroma/frontend_configurations`: settings per front-end, by its name. */
export const FrontendConfigurationsSchema = z
  .record(z.string(), z.record(z.string(), z.unknown()))
  .openapi("FrontendConfigurations");

/** Mastodon 3.4's Suggestion (`/api/v2/suggestions`). */
export const SuggestionSchema = z
  .object({
    source: z.enum(["staff", "past_interactions", "global"]),
    sources: z.array(z.string()),
    account: AccountSchema,
  })
  .openapi("Suggestion");

/** Mastodon 4.4's TermsOfService (`/api/v1/instance/terms_of_service`). */
export const TermsOfServiceSchema = z
  .object({
    effective_date: z.string(),
    effective: z.boolean(),
    content: z.string(),
    succeeded_by: z.string().nullable(),
  })
  .openapi("TermsOfService");

/** Mastodon 4.0's PrivacyPolicy (`/api/v1/instance/privacy_policy`). */
export const PrivacyPolicySchema = z.object({ updated_at: z.string(), content: z.string() }).openapi("PrivacyPolicy");
