/**
 * What Starling tells apps it is, and what that obliges (issue 45). Apps decide what to show from the server's
 * `version` (Ice Cubes: the float of its first three characters), `api_versions.mastodon` (Phanpy, Ice Cubes)
 * and nodeinfo's `features` (Pleroma-FE, Soapbox). Claiming a level makes those apps call its endpoints, so each
 * level lists the endpoints the listed apps call when they see it, and the claim is the highest level whose
 * endpoints are all served. test/compatibility.test.ts reads each app's gate (from its source) against the
 * instance documents and calls every endpoint the claim opens: none may answer 404, and the next level up must
 * still have one that does (so the claim is never lower than what is served either).
 *
 * Placeholders in paths (`:status_id`, `:filter_id`…) are filled by that test with real ids.
 */

/** The apps whose gates are held (their sources: the test's header). */
export type App = "iceCubes" | "phanpy" | "elk" | "soapbox" | "pleromaFe" | "tusky";

export interface Level {
  /** The Mastodon version this level is, as `version` begins (full semver: Soapbox parses it strictly). */
  version: string;
  /** `api_versions.mastodon` at this level (Mastodon numbers its API from 4.3; before that, 1). */
  api: number;
  /** `METHOD /path` the listed apps call when they see this level. */
  calls: Partial<Record<App, string[]>>;
}

export const LEVELS: Level[] = [
  {
    // The contract: Mastodon 2.7.2 with Pleroma 2.5's extensions. What the apps call whatever the level.
    version: "2.7.2",
    api: 1,
    calls: {
      elk: [
        "GET /api/v2/instance",
        "GET /api/v2/search?q=a",
        "GET /api/v1/trends/statuses",
        "GET /api/v1/trends/links",
        "GET /api/v1/trends/tags",
        "GET /api/v2/suggestions",
      ],
      phanpy: [
        "GET /api/v2/instance",
        "GET /nodeinfo/2.0",
        "GET /api/v2/filters",
        // Its account card, on every profile opened (Mastodon 3.5, asked whatever the level).
        "GET /api/v1/accounts/familiar_followers?id[]=:account_id",
      ],
      iceCubes: ["GET /api/v2/instance", "GET /api/v1/instance"],
      soapbox: [
        "GET /api/v1/instance",
        "GET /api/v1/accounts/search?q=",
        // An admin's Soapbox polls Mastodon's admin API for its counters whatever the server.
        "GET /api/v1/admin/accounts?pending=true",
        "GET /api/v2/admin/accounts?status=pending",
        "GET /api/v1/admin/reports?resolved=false",
      ],
      tusky: ["GET /nodeinfo/2.0", "GET /api/v1/instance", "GET /api/v1/filters"],
    },
  },
  {
    version: "3.5.0",
    api: 1,
    calls: {
      // Ice Cubes: Edit (`isEditSupported`).
      iceCubes: ["PUT /api/v1/statuses/:status_id", "GET /api/v1/statuses/:status_id/history"],
    },
  },
  {
    version: "4.0.0",
    api: 1,
    calls: {
      // Ice Cubes: filters (`isFiltersSupported`, its ServerFilters endpoint: no deletion of a whole filter).
      iceCubes: [
        "GET /api/v2/filters",
        "POST /api/v2/filters",
        "GET /api/v2/filters/:filter_id",
        "PUT /api/v2/filters/:filter_id",
        "POST /api/v2/filters/:filter_id/keywords",
        "DELETE /api/v2/filters/keywords/:keyword_id",
      ],
    },
  },
  {
    version: "4.1.0",
    api: 1,
    calls: {
      // Ice Cubes: alt text edited with the post (`isEditAltTextSupported`: `media_attributes[]`).
      iceCubes: ["PUT /api/v1/statuses/:status_id"],
    },
  },
  {
    version: "4.3.0",
    api: 2,
    calls: {
      // Ice Cubes: grouped notifications, notification filtering, the link timeline.
      iceCubes: [
        "GET /api/v2/notifications",
        "GET /api/v2/notifications/:group_key",
        "GET /api/v2/notifications/:group_key/accounts",
        "GET /api/v2/notifications/unread_count",
        "POST /api/v2/notifications/:dismissed_group_key/dismiss",
        "GET /api/v2/notifications/policy",
        "PATCH /api/v2/notifications/policy",
        "GET /api/v1/notifications/requests",
        "POST /api/v1/notifications/requests/accept",
        "POST /api/v1/notifications/requests/dismiss",
        "GET /api/v1/timelines/link?url=https%3A%2F%2Fexample.com%2F",
      ],
      // Phanpy: grouped notifications (`api_versions.mastodon >= 2`).
      phanpy: ["GET /api/v2/notifications", "GET /api/v2/notifications/:group_key/accounts"],
    },
  },
  {
    version: "4.4.0",
    api: 5,
    calls: {
      // Phanpy: the blur filter (`api_versions.mastodon >= 5`).
      phanpy: ["POST /api/v2/filters?filter_action=blur&title=blurred&context[]=home"],
    },
  },
  {
    version: "4.5.0",
    api: 7,
    calls: {
      // Phanpy: native quotes (`supportsNativeQuote`: `api_versions.mastodon >= 7`), posting with
      // `quoted_status_id` and `quote_approval_policy`, a post's quotes (revoking one answers 404 for a post that
      // is no quote of it, as Mastodon: test/quotes.test.ts calls it on a real one).
      phanpy: [
        "POST /api/v1/statuses",
        "GET /api/v1/statuses/:status_id/quotes",
        "PUT /api/v1/statuses/:status_id/interaction_policy",
      ],
    },
  },
];

/**
 * The level claimed: the highest whose endpoints are all served (grouped notifications and notification requests
 * since issue 45; quotes, 4.5 and `api_versions` 7, since issue 46).
 */
export const CLAIMED: Level = LEVELS.find((l) => l.version === "4.5.0")!;

/** The Pleroma release whose API (with its extensions) Starling speaks. */
export const PLEROMA_VERSION = "2.5.0";

/**
 * `version` as every reader parses it: the level first (Ice Cubes' float, Phanpy's and Soapbox's semver), then
 * Pleroma's compatibility marker, whose third part Soapbox parses as semver: Starling's own version rides in
 * the build metadata (`+starling.x.y.z`), as Pleroma builds mark themselves.
 */
export const apiVersion = (starling: string) =>
  `${CLAIMED.version} (compatible; Pleroma ${PLEROMA_VERSION}+starling.${starling})`;

/** nodeinfo's software version: Pleroma's, with Starling's in the build metadata (Tusky and Pachli parse it). */
export const softwareVersion = (starling: string) => `${PLEROMA_VERSION}+starling.${starling}`;

/**
 * nodeinfo's `features` (also the instance's `pleroma.metadata.features`): a flag each, with what apps call
 * when they see it. Pleroma-FE and Soapbox switch screens on by them; each lands with what it opens.
 */
export const FEATURES: Record<string, string[]> = {
  pleroma_api: [],
  mastodon_api: [],
  mastodon_api_streaming: ["GET /api/v1/streaming/health"],
  polls: ["GET /api/v1/polls/:poll_id"],
  pleroma_explicit_addressing: [],
  multifetch: ["GET /api/v1/statuses?id[]=:status_id"],
  pleroma_emoji_reactions: ["PUT /api/v1/pleroma/statuses/:status_id/reactions/%F0%9F%91%8D"],
  pleroma_chat_messages: ["GET /api/v1/pleroma/chats", "GET /api/v2/pleroma/chats"],
  shareable_emoji_packs: ["GET /api/v1/pleroma/emoji/packs"],
  pleroma_custom_emoji_reactions: [],
  // Pleroma-FE shows Edit only when this is listed.
  editing: [
    "PUT /api/v1/statuses/:status_id",
    "GET /api/v1/statuses/:status_id/history",
    "GET /api/v1/statuses/:status_id/source",
  ],
  // Soapbox asks `/api/v2/suggestions` instead of v1 when this is listed.
  v2_suggestions: ["GET /api/v2/suggestions"],
  // Pleroma-FE offers quoting and shows quotes when this is listed (issue 46).
  quote_posting: ["GET /api/v1/pleroma/statuses/:status_id/quotes"],
};
