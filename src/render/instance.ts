/** Instance information and nodeinfo, sharing the figures and limits. */
import { ZIP_LIMITS } from "../lib/zip";
import { apiVersion, CLAIMED, FEATURES, softwareVersion } from "../lib/compatibility";
import { config, VERSION, type Env } from "../env";
import type { InstanceStats } from "../services/instance";
import { RESERVED_NICKNAMES } from "../lib/nicknames";
import { CONTENT_TYPES } from "../content/format";
import { MAX_PINNED } from "../lib/limits";
import type { MrfTransparency } from "../services/federation-policies";
import { builtInImageUrl, DEFAULT_HEADER, origins } from "../lib/media-urls";

const API_VERSION = apiVersion(VERSION);
/** Where the source is published: not yet recorded anywhere, so empty rather than made up. */
const SOURCE_URL = "";
const SOFTWARE_VERSION = softwareVersion(VERSION);

/** Capabilities clients switch features on by (src/lib/compatibility.ts: each with what it opens). */
const FEATURE_FLAGS = Object.keys(FEATURES);

/** Content types accepted for posts (`content_type`): those the content pipeline renders. */
export const POST_FORMATS: string[] = CONTENT_TYPES;

function fieldsLimits(env: Env) {
  return config(env).fieldsLimits;
}

/**
 * Federation as Pleroma reports it. Enabled only when `DOMAIN` is set: without it the federation endpoints
 * answer 503 on any public host (src/federation/door/handle.ts), so claiming otherwise would invite followers in vain.
 */
function federation(env: Env, mrf: MrfTransparency) {
  return {
    enabled: Boolean(config(env).domain),
    exclusions: false,
    mrf_policies: ["SimplePolicy"],
    ...mrf,
    quarantined_instances: [] as string[],
    quarantined_instances_info: { quarantined_instances: {} as Record<string, { reason: string }> },
  };
}

export function renderInstance(
  env: Env,
  base: string,
  host: string,
  stats: InstanceStats,
  vapidKey: string,
  mrf: MrfTransparency,
) {
  const c = config(env);
  const streaming = base.replace(/^http/, "ws");
  const banner = builtInImageUrl(origins(env, base), DEFAULT_HEADER);
  return {
    // The full URL, as Pleroma answers: Phanpy builds the server's URLs from it.
    uri: base,
    title: c.name,
    description: c.description,
    short_description: c.shortDescription,
    version: API_VERSION,
    email: c.email,
    urls: { streaming_api: streaming },
    stats: { user_count: stats.userCount, status_count: stats.statusCount, domain_count: stats.domainCount },
    thumbnail: banner,
    languages: c.languages,
    registrations: c.registrationsOpen,
    approval_required: c.approvalRequired,
    invites_enabled: !c.registrationsOpen,
    max_toot_chars: c.maxTootChars,
    max_media_attachments: c.maxMediaAttachments,
    chat_limit: c.chatLimit,
    description_limit: c.descriptionLimit,
    poll_limits: c.pollLimits,
    upload_limit: c.uploadLimit,
    avatar_upload_limit: c.avatarUploadLimit,
    background_upload_limit: c.backgroundUploadLimit,
    banner_upload_limit: c.bannerUploadLimit,
    background_image: banner,
    // Mastodon's shape, which current clients read for limits: only what is enforced is reported.
    configuration: {
      statuses: { max_characters: c.maxTootChars, max_media_attachments: c.maxMediaAttachments },
      media_attachments: {
        supported_mime_types: c.uploadTypes,
        image_size_limit: c.uploadLimit,
        video_size_limit: c.uploadLimit,
        description_limit: c.descriptionLimit,
      },
      polls: {
        max_options: c.pollLimits.max_options,
        max_characters_per_option: c.pollLimits.max_option_chars,
        min_expiration: c.pollLimits.min_expiration,
        max_expiration: c.pollLimits.max_expiration,
      },
      accounts: { max_profile_fields: c.fieldsLimits.max_fields },
    },
    vapid_public_key: vapidKey,
    pleroma: {
      metadata: {
        account_activation_required: c.activationRequired,
        features: FEATURE_FLAGS,
        federation: federation(env, mrf),
        fields_limits: fieldsLimits(env),
        // What an uploaded or downloaded archive (emoji packs) may hold (lib/zip.ts); one file, as any upload.
        archive_limits: {
          max_entries: ZIP_LIMITS.maxEntries,
          max_uncompressed_bytes: ZIP_LIMITS.maxTotalBytes,
          max_file_bytes: c.uploadLimit,
        },
        post_formats: POST_FORMATS,
      },
      stats: { mau: stats.activeMonth },
      vapid_public_key: vapidKey,
    },
  };
}

/**
 * Mastodon 4's Instance (`/api/v2/instance`), made from the v1 answer so both tell the same facts, with
 * Pleroma's extra `pleroma` object as Pleroma 2.5 adds it.
 */
export function renderInstanceV2(
  v1: ReturnType<typeof renderInstance>,
  host: string,
  base: string,
  translation = false,
) {
  return {
    domain: host,
    title: v1.title,
    version: v1.version,
    source_url: SOURCE_URL,
    // Mastodon 4.3's API number at the level claimed (src/lib/compatibility.ts): Phanpy and Ice Cubes gate on it.
    api_versions: { mastodon: CLAIMED.api },
    description: v1.short_description || v1.description,
    usage: { users: { active_month: v1.pleroma.stats.mau } },
    thumbnail: { url: v1.thumbnail },
    // Mastodon 4.3's app icons: none are configured.
    icon: [] as never[],
    languages: v1.languages,
    configuration: {
      urls: { streaming: v1.urls.streaming_api },
      vapid: { public_key: v1.vapid_public_key },
      accounts: { max_featured_tags: 0, max_pinned_statuses: MAX_PINNED },
      statuses: {
        max_characters: v1.max_toot_chars,
        max_media_attachments: v1.max_media_attachments,
        characters_reserved_per_url: 0,
      },
      media_attachments: {
        // What uploads accept (UPLOAD_TYPES), as v1 says: one fact, one source.
        supported_mime_types: v1.configuration.media_attachments.supported_mime_types,
        image_size_limit: v1.upload_limit,
        video_size_limit: v1.upload_limit,
        description_limit: v1.description_limit,
      },
      polls: {
        max_options: v1.poll_limits.max_options,
        max_characters_per_option: v1.poll_limits.max_option_chars,
        min_expiration: v1.poll_limits.min_expiration,
        max_expiration: v1.poll_limits.max_expiration,
      },
      translation: { enabled: translation },
    },
    // The sign-up page (routes/sign-up.ts), where apps without in-app sign-up send people.
    registrations: {
      enabled: v1.registrations,
      approval_required: v1.approval_required,
      // The sign-up form asks a reason without requiring one; no age is asked.
      reason_required: false,
      min_age: null,
      message: null,
      url: `${base}/auth/sign_up`,
    },
    contact: { email: v1.email, account: null },
    rules: [] as never[],
    pleroma: {
      ...v1.pleroma,
      metadata: {
        ...v1.pleroma.metadata,
        avatar_upload_limit: v1.avatar_upload_limit,
        background_upload_limit: v1.background_upload_limit,
        banner_upload_limit: v1.banner_upload_limit,
        background_image: v1.background_image,
        chat_limit: v1.chat_limit,
        description_limit: v1.description_limit,
      },
    },
  };
}

export function renderNodeinfo(env: Env, version: "2.0" | "2.1", stats: InstanceStats, mrf: MrfTransparency) {
  const c = config(env);
  const software = { name: "pleroma" as const, version: SOFTWARE_VERSION };
  return {
    version,
    software,
    protocols: ["activitypub"],
    services: { inbound: [] as string[], outbound: [] as string[] },
    openRegistrations: c.registrationsOpen,
    usage: {
      users: { total: stats.userCount, activeMonth: stats.activeMonth, activeHalfyear: stats.activeHalfyear },
      localPosts: stats.statusCount,
    },
    metadata: {
      nodeName: c.name,
      nodeDescription: c.description,
      private: false,
      features: FEATURE_FLAGS,
      federation: federation(env, mrf),
      accountActivationRequired: c.activationRequired,
      invitesEnabled: !c.registrationsOpen,
      mailerEnabled: c.activationRequired || c.mailer === "cloudflare",
      postFormats: POST_FORMATS,
      uploadLimits: {
        general: c.uploadLimit,
        avatar: c.avatarUploadLimit,
        banner: c.bannerUploadLimit,
        background: c.backgroundUploadLimit,
      },
      fieldsLimits: {
        maxFields: c.fieldsLimits.max_fields,
        maxRemoteFields: c.fieldsLimits.max_remote_fields,
        nameLength: c.fieldsLimits.name_length,
        valueLength: c.fieldsLimits.value_length,
      },
      pollLimits: c.pollLimits,
      staffAccounts: stats.staff,
      suggestions: { enabled: false },
      restrictedNicknames: RESERVED_NICKNAMES,
      skipThreadContainment: true,
    },
  };
}

type DatedDocument = { html: string; uploaded: Date };

/** Mastodon 4.4's TermsOfService: the uploaded document, in force since it was uploaded. */
export const renderTermsOfService = (doc: DatedDocument) => ({
  effective_date: doc.uploaded.toISOString().slice(0, 10),
  effective: true,
  content: doc.html,
  succeeded_by: null,
});

/** Mastodon's PrivacyPolicy: the uploaded document, or one saying there is none (Mastodon always has one). */
export const renderPrivacyPolicy = (doc: DatedDocument | null) => ({
  updated_at: (doc?.uploaded ?? new Date(0)).toISOString(),
  content: doc?.html ?? "<p>This server has not published a privacy policy.</p>",
});
