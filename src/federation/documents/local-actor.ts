/**
 * This instance's actors as documents: a local account's (served at its id, sent in `Update`s of it) and the
 * instance actor's. The one rendering of a local actor.
 */
import type { Context } from "@fedify/fedify";
import { Application, Endpoints, Group, Image, Person, PropertyValue, Service } from "@fedify/vocab";
import type { accounts } from "../../db/schema";
import { config } from "../../env";
import { mediaUrl, origins } from "../../lib/media-urls";
import { movedToUri } from "../../services/local-actors";
import type { FederationData } from "../data";
import { INSTANCE_ACTOR } from "../door/instance-actor";
import { emojiTag } from "./emoji-tags";
import { instant } from "./notes";

export async function instanceActor(ctx: Context<FederationData>) {
  const keys = await ctx.getActorKeyPairs(INSTANCE_ACTOR);
  const cfg = config(ctx.data.env);
  return new Application({
    id: ctx.getActorUri(INSTANCE_ACTOR),
    preferredUsername: INSTANCE_ACTOR,
    name: cfg.name,
    summary: "The instance actor: it signs this instance's requests to other servers.",
    url: new URL("/", ctx.canonicalOrigin),
    inbox: ctx.getInboxUri(INSTANCE_ACTOR),
    endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
    manuallyApprovesFollowers: true,
    publicKey: keys[0]?.cryptographicKey ?? null,
    assertionMethods: keys.map((k) => k.multikey),
  });
}

/**
 * A live local account's actor document, as served at its id and sent in `Update`s of it (the one rendering of a
 * local actor). `deleting`: only what verifies its last signatures.
 */
export async function localActor(
  ctx: Context<FederationData>,
  a: typeof accounts.$inferSelect,
  opts: { deleting?: boolean; restricted?: boolean } = {},
) {
  const id = ctx.getActorUri(a.username);
  const keys = await ctx.getActorKeyPairs(a.username);
  // Being deleted: only what verifies its last signatures (the actor Delete) until the deletion job is done.
  // Restricted (a fetch authorized fetch refuses): only what verifies signatures, as Mastodon's `restrict_fields_to`.
  if (opts.deleting || opts.restricted)
    return new Person({
      id,
      preferredUsername: a.username,
      inbox: ctx.getInboxUri(a.username),
      ...(opts.deleting ? {} : { endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }) }),
      publicKey: keys[0]?.cryptographicKey ?? null,
      assertionMethods: keys.map((k) => k.multikey),
    });
  const o = origins(ctx.data.env, ctx.canonicalOrigin);
  const Actor =
    a.actorType === "Service" || a.actorType === "Application" ? Service : a.actorType === "Group" ? Group : Person;
  return withCapabilities(
    Actor,
    a.acceptsChatMessages !== false,
    new Actor({
      id,
      preferredUsername: a.username,
      name: a.displayName || null,
      summary: a.note || null,
      url: new URL(a.url),
      published: instant(a.createdAt),
      // When the profile last changed: receivers of an `Update` of it (and refetches) see it is newer.
      updated: instant(a.updatedAt),
      icon: a.avatar ? new Image({ url: new URL(mediaUrl(o, a.avatar)) }) : null,
      image: a.header ? new Image({ url: new URL(mediaUrl(o, a.header)) }) : null,
      attachments: a.fields.map((f) => new PropertyValue({ name: f.name, value: f.value })),
      // The profile's custom emoji, as Mastodon tags them, so other servers render `:code:` in name, bio and fields.
      tags: a.emojis.map((e) => emojiTag(o, e.shortcode, e.url)),
      manuallyApprovesFollowers: a.locked,
      discoverable: a.discoverable,
      aliases: a.alsoKnownAs.flatMap((u) => (/^https?:\/\//.test(u) ? [new URL(u)] : [])),
      // `movedTo`: the account it moved to (move_account).
      successor: a.movedToAccountId ? await movedToUri(ctx.data.d, a.movedToAccountId) : null,
      inbox: ctx.getInboxUri(a.username),
      endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
      followers: ctx.getFollowersUri(a.username),
      following: ctx.getFollowingUri(a.username),
      outbox: ctx.getOutboxUri(a.username),
      featured: ctx.getFeaturedUri(a.username),
      publicKey: keys[0]?.cryptographicKey ?? null,
      assertionMethods: keys.map((k) => k.multikey),
    }),
  );
}

const LITEPUB = {
  litepub: "http://litepub.social/ns#",
  capabilities: "litepub:capabilities",
  acceptsChatMessages: "litepub:acceptsChatMessages",
};

/**
 * The actor with Pleroma's `capabilities: {acceptsChatMessages}` (LitePub): Pleroma and other Starling instances
 * read it before offering a chat. Fedify has no property for it; a document it parses keeps what it was given, so
 * the actor is written out, the capability added, and read back.
 */
async function withCapabilities<T extends Person | Service | Group>(
  cls: { fromJsonLd(json: unknown): Promise<T> },
  acceptsChatMessages: boolean,
  actor: T,
): Promise<T> {
  const doc = (await actor.toJsonLd()) as Record<string, unknown>;
  const context = Array.isArray(doc["@context"]) ? doc["@context"] : [doc["@context"]];
  return cls.fromJsonLd({ ...doc, "@context": [...context, LITEPUB], capabilities: { acceptsChatMessages } });
}
