import { z } from "@hono/zod-openapi";

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

export const PollLimitsSchema = z.object({
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
    vapid_public_key: z.string(),
    configuration: z.object({ statuses: z.object({ max_characters: z.number().int(), max_media_attachments: z.number().int() }) }),
    ...limits,
    pleroma: z.object({
      metadata: z.object({
        account_activation_required: z.boolean(),
        features: z.array(z.string()),
        federation: z.object({ enabled: z.boolean(), exclusions: z.boolean(), mrf_policies: z.array(z.string()), quarantined_instances: z.array(z.string()) }),
        fields_limits: z.object({ max_fields: z.number().int(), max_remote_fields: z.number().int(), name_length: z.number().int(), value_length: z.number().int() }),
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
    software: z.object({ name: z.literal("pleroma"), version: z.string(), repository: z.string().optional(), homepage: z.string().optional() }),
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
