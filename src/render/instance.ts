/** Instance information and nodeinfo, sharing the figures and limits. */
import { config, VERSION, type Env } from "../env";
import type { InstanceStats } from "../services/instance";
import { RESERVED_NICKNAMES } from "../services/accounts";
import { CONTENT_TYPES } from "../content/format";

export const API_VERSION = `2.7.2 (compatible; Pleroma 2.5.0; Starling ${VERSION})`;
export const SOFTWARE_VERSION = `2.5.0+starling.${VERSION}`;

/**
 * Capabilities clients switch features on by. Only what this server really does is listed: each capability
 * adds its flag when it lands (e.g. `polls`, `pleroma_emoji_reactions`, `mastodon_api_streaming`).
 */
export const FEATURES = ["pleroma_api", "mastodon_api", "mastodon_api_streaming", "polls", "pleroma_explicit_addressing", "multifetch", "pleroma_emoji_reactions"];

/** Content types accepted for posts (`content_type`): those the content pipeline renders. */
export const POST_FORMATS: string[] = CONTENT_TYPES;

function fieldsLimits(env: Env) {
  return config(env).fieldsLimits;
}

function federation() {
  return { enabled: true, exclusions: false, mrf_policies: [] as string[], quarantined_instances: [] as string[] };
}

export function renderInstance(env: Env, base: string, host: string, stats: InstanceStats, vapidKey: string) {
  const c = config(env);
  const streaming = base.replace(/^http/, "ws");
  return {
    uri: host,
    title: c.name,
    description: c.description,
    short_description: c.shortDescription,
    version: API_VERSION,
    email: c.email,
    urls: { streaming_api: streaming },
    stats: { user_count: stats.userCount, status_count: stats.statusCount, domain_count: stats.domainCount },
    thumbnail: `${base}/images/banner.png`,
    languages: c.languages,
    registrations: c.registrationsOpen,
    approval_required: false,
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
    background_image: `${base}/images/banner.png`,
    vapid_public_key: vapidKey,
    // Mastodon 3.x+ clients read their limits here.
    configuration: { statuses: { max_characters: c.maxTootChars, max_media_attachments: c.maxMediaAttachments } },
    pleroma: {
      metadata: {
        account_activation_required: c.activationRequired,
        features: FEATURES,
        federation: federation(),
        fields_limits: fieldsLimits(env),
        post_formats: POST_FORMATS,
      },
      stats: { mau: stats.activeMonth },
      vapid_public_key: vapidKey,
    },
  };
}

export function renderNodeinfo(env: Env, version: "2.0" | "2.1", stats: InstanceStats) {
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
      features: FEATURES,
      federation: federation(),
      accountActivationRequired: c.activationRequired,
      invitesEnabled: !c.registrationsOpen,
      mailerEnabled: c.activationRequired || c.mailer === "cloudflare",
      postFormats: POST_FORMATS,
      uploadLimits: { general: c.uploadLimit, avatar: c.avatarUploadLimit, banner: c.bannerUploadLimit, background: c.backgroundUploadLimit },
      fieldsLimits: { maxFields: c.fieldsLimits.max_fields, maxRemoteFields: c.fieldsLimits.max_remote_fields, nameLength: c.fieldsLimits.name_length, valueLength: c.fieldsLimits.value_length },
      pollLimits: c.pollLimits,
      staffAccounts: stats.staff,
      suggestions: { enabled: false },
      restrictedNicknames: RESERVED_NICKNAMES,
      skipThreadContainment: true,
    },
  };
}
