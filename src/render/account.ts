/** The Account entity, with its `pleroma` part; owner-only fields only for the owner. */
import { iso } from "../lib/iso";
import type { Account, Relationship } from "../schemas/account";
import type { AccountWithUser } from "../services/accounts";
import { builtInImageUrl, DEFAULT_AVATAR, DEFAULT_HEADER, mediaUrl, type Origins } from "../lib/media-urls";

export interface RenderContext extends Origins {
  /** Origin the client reached, e.g. `https://social.example`: links hang off it (files off `media` when set). */
  base: string;
  /** Host name of this instance (for `fqn` and local accts). */
  host: string;
  /** The account asking, if any. */
  viewerId: string | null;
}

export interface AccountExtras {
  /** Embed this relationship in `pleroma.relationship` (else `{}`). */
  relationship?: Relationship;
  /** Include `source` (verify_credentials, update_credentials). */
  source?: boolean;
  /** Include `pleroma.settings_store` (verify_credentials, update_credentials). */
  settingsStore?: boolean;
  /** The account it moved to, rendered (`moved`). */
  moved?: Account | null;
  /** Owner counters. */
  followRequestsCount?: number;
  unreadConversationCount?: number;
  unreadNotificationsCount?: number;
}

export function renderAccount(
  ctx: RenderContext,
  { account: a, user: u }: AccountWithUser,
  extras: AccountExtras = {},
): Account {
  const self = ctx.viewerId === a.id;
  const avatar = a.avatar ? mediaUrl(ctx, a.avatar) : builtInImageUrl(ctx, DEFAULT_AVATAR);
  const header = a.header ? mediaUrl(ctx, a.header) : builtInImageUrl(ctx, DEFAULT_HEADER);
  const acct = a.domain ? `${a.username}@${a.domain}` : a.username;
  const showRole = u ? u.showRole || self : false;
  const out: Account = {
    id: a.id,
    username: a.username,
    acct,
    fqn: `${a.username}@${a.domain ?? ctx.host}`,
    display_name: a.displayName || a.username,
    locked: a.locked,
    bot: a.actorType === "Service" || a.actorType === "Group",
    discoverable: a.discoverable,
    group: a.actorType === "Group",
    created_at: iso(a.createdAt),
    note: a.note,
    url: a.url,
    avatar,
    avatar_static: avatar,
    header,
    header_static: header,
    followers_count: a.hideFollowersCount && !self ? 0 : a.followersCount,
    following_count: a.hideFollowsCount && !self ? 0 : a.followingCount,
    statuses_count: a.statusesCount,
    // Pleroma and Mastodon give the day only, so the exact time of the last post is not disclosed.
    last_status_at: a.lastStatusAt === null ? null : iso(a.lastStatusAt).slice(0, 10),
    // A local profile's emoji hold R2 keys (made absolute here, as a status's are); a remote one's, absolute URLs.
    emojis: a.emojis.map((e) => ({
      ...e,
      url: mediaUrl(ctx, e.url),
      static_url: mediaUrl(ctx, e.static_url),
    })),
    fields: a.fields,
    pleroma: {
      ap_id: a.uri,
      also_known_as: a.alsoKnownAs,
      background_image: a.background ? mediaUrl(ctx, a.background) : null,
      tags: a.tags,
      relationship: extras.relationship ?? {},
      is_confirmed: u ? u.confirmed : true,
      confirmation_pending: u ? !u.confirmed : false,
      hide_favorites: a.hideFavorites,
      hide_followers: a.hideFollowers,
      hide_follows: a.hideFollows,
      hide_followers_count: a.hideFollowersCount,
      hide_follows_count: a.hideFollowsCount,
      deactivated: a.deactivated,
      skip_thread_containment: u ? u.skipThreadContainment : false,
      accepts_chat_messages: a.acceptsChatMessages,
      favicon: a.domain === null ? null : a.favicon,
      is_local: a.domain === null,
    },
  };
  if (extras.moved) out.moved = extras.moved;
  if (u && showRole) {
    out.pleroma.is_admin = u.isAdmin;
    out.pleroma.is_moderator = u.isModerator;
  }
  if (self && u) {
    out.pleroma.allow_following_move = u.allowFollowingMove;
    out.pleroma.unread_conversation_count = extras.unreadConversationCount ?? 0;
    out.pleroma.unread_notifications_count = extras.unreadNotificationsCount ?? 0;
    out.pleroma.notification_settings = u.notificationSettings;
    out.pleroma.email = u.email;
    out.follow_requests_count = extras.followRequestsCount ?? 0;
    if (extras.settingsStore) out.pleroma.settings_store = u.settingsStore;
    if (extras.source) {
      out.source = {
        note: u.noteSource,
        sensitive: u.sensitive,
        privacy: u.defaultScope as NonNullable<Account["source"]>["privacy"],
        language: u.postingLanguage,
        fields: u.fieldsSource,
        quote_policy: u.quotePolicy,
        pleroma: {
          show_role: u.showRole,
          no_rich_text: u.noRichText,
          discoverable: a.discoverable,
          actor_type: a.actorType,
        },
      };
    }
  }
  return out;
}
