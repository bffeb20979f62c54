/**
 * What Fedify serves: WebFinger's links, actors (local accounts and the instance actor) and their key pairs,
 * followers/following collections, statuses at their ids, reblogs' `Announce`s, outboxes and featured
 * collections. Authorized fetch (door/authorized-fetch.ts) decides who may read each.
 */
import type { Context, FederationBuilder, RequestContext } from "@fedify/fedify";
import { Announce, Note, QuoteAuthorization, Tombstone } from "@fedify/vocab";
import { follows, type accounts } from "../../db/schema";
import { pemToDer } from "../../lib/keys";
import { relatedAccounts } from "../../services/account-pages";
import { actorKeys } from "../../services/credentials";
import { instanceActorKeys } from "../../services/instance-keys";
import { origins } from "../../lib/media-urls";
import { localAccount } from "../../services/local-actors";
import {
  featuredCount,
  featuredStatuses,
  federatedStatus,
  outboxCount,
  outboxPage,
} from "../../services/federated-statuses";
import { deletionState } from "../../services/account-deletion";
import { localStamp } from "../../services/quotes";
import { subscribeTemplate, SUBSCRIBE_REL } from "../../services/remote-interaction";
import type { FederationData } from "../data";
import { fetchAllowed, ownerByUsername, ownerOfStatus } from "../door/authorized-fetch";
import { INSTANCE_ACTOR } from "../door/instance-actor";
import { announceActivity, outboxActivity, statusObject, type NoteContext } from "./notes";
import { instanceActor, localActor } from "./local-actor";
import { registerInteractionAuthorizations } from "./interaction-requests";

/** Accounts per page of a followers/following collection. */
const COLLECTION_PAGE = 40;
/** The first page's cursor (pages after it are cursored by the relation row's id). */
const FIRST = "first";

async function importKeys(keys: {
  privateKey: string;
  publicKey: string;
  proofKey: JsonWebKey;
}): Promise<CryptoKeyPair[]> {
  const rsa = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
  const { d: _secret, key_ops: _ops, ...publicJwk } = keys.proofKey;
  return [
    {
      privateKey: await crypto.subtle.importKey("pkcs8", pemToDer(keys.privateKey), rsa, true, ["sign"]),
      publicKey: await crypto.subtle.importKey("spki", pemToDer(keys.publicKey), rsa, true, ["verify"]),
    },
    {
      privateKey: await crypto.subtle.importKey("jwk", keys.proofKey, { name: "Ed25519" }, true, ["sign"]),
      publicKey: await crypto.subtle.importKey("jwk", publicJwk, { name: "Ed25519" }, true, ["verify"]),
    },
  ];
}

/**
 * Followers and following as ActivityPub collections: real rows (local and remote accounts, deactivated ones
 * left out), newest first. A user who hides the list shows no items; one who hides the count shows no total.
 */
const url = (u: string | null) => (u ? new URL(u) : null);

/** A follower as Fedify's `Recipient` (what delivery to "followers" needs); the collection shows its id. */
function recipient(a: { uri: string; inboxUrl: string | null; sharedInboxUrl: string | null }) {
  return { id: new URL(a.uri), inboxId: url(a.inboxUrl), endpoints: { sharedInbox: url(a.sharedInboxUrl) } };
}

function relationCollection<T>(side: "followers" | "following", item: (a: typeof accounts.$inferSelect) => T) {
  const by = side === "followers" ? "targetAccountId" : "accountId";
  const hideItems = side === "followers" ? "hideFollowers" : "hideFollows";
  const hideCount = side === "followers" ? "hideFollowersCount" : "hideFollowsCount";
  return {
    async dispatcher(ctx: Context<FederationData>, identifier: string, cursor: string | null) {
      const a = await localAccount(ctx.data.d, identifier);
      if (!a || a.deactivated || a.username !== identifier || cursor === null) return null;
      // Hidden from whoever asks over HTTP; delivery (`sendActivity(…, "followers")` reads this same dispatcher
      // without a request) still needs the real followers.
      if (a[hideItems] && "request" in ctx) return { items: [] as T[] };
      const rows = await relatedAccounts(ctx.data.d, follows, by, a.id, {
        max_id: cursor === FIRST ? undefined : cursor,
        limit: COLLECTION_PAGE + 1,
      });
      const page = rows.slice(0, COLLECTION_PAGE);
      return {
        items: page.map((r) => item(r.account)),
        nextCursor: rows.length > COLLECTION_PAGE ? page[page.length - 1]!.cursor : null,
      };
    },
    /** Pages exist for a live local account; for anyone else the dispatcher answers null (404). */
    async firstCursor(ctx: Context<FederationData>, identifier: string) {
      const a = await localAccount(ctx.data.d, identifier);
      return a && !a.deactivated && a.username === identifier ? FIRST : null;
    },
    async counter(ctx: Context<FederationData>, identifier: string) {
      const a = await localAccount(ctx.data.d, identifier);
      if (!a || a.deactivated || a[hideCount]) return null;
      return side === "followers" ? a.followersCount : a.followingCount;
    },
  };
}

/** Authorized fetch (authorized-fetch.ts) of a local account's collections. */
const byOwner = (ctx: RequestContext<FederationData>, identifier: string) =>
  fetchAllowed(ctx, ownerByUsername(identifier));

/** What the status objects are built with: ids and links hang off the canonical origin (`https://DOMAIN`). */
function noteContext(ctx: Context<FederationData>): NoteContext {
  return { ...origins(ctx.data.env, ctx.canonicalOrigin), followersOf: (username) => ctx.getFollowersUri(username) };
}

/** A live local account whose nickname is exactly `identifier` (collections of anyone else: 404). */
async function liveAccount(ctx: Context<FederationData>, identifier: string) {
  const a = await localAccount(ctx.data.d, identifier);
  return a && !a.deactivated && a.username === identifier ? a : null;
}

/** Registers every dispatcher on the builder (once per isolate). */
export function registerDispatchers(builder: FederationBuilder<FederationData>): void {
  registerActors(builder);
  registerWebFingerLinks(builder);
  registerRelations(builder);
  registerStatusObjects(builder);
  registerQuoteStamps(builder);
  registerInteractionAuthorizations(builder);
  registerOutbox(builder);
  registerFeatured(builder);
}

/** Local accounts and the instance actor: the actor documents, their handles and their key pairs. */
function registerActors(builder: FederationBuilder<FederationData>): void {
  builder
    .setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
      if (identifier === INSTANCE_ACTOR) return instanceActor(ctx);
      const a = await localAccount(ctx.data.d, identifier);
      if (!a || a.username !== identifier) return null;
      const id = ctx.getActorUri(a.username);
      // Mastodon answers 410 Gone for an account that no longer acts; Fedify turns a Tombstone into that.
      const deleting = a.deactivated && (await deletionState(ctx.data.d, a.id)) === "pending";
      if (a.deactivated && !deleting) return new Tombstone({ id });
      // The same to a fetch authorized fetch does not allow (unsigned, or signed by someone it blocks), as Mastodon.
      const restricted =
        !deleting &&
        "request" in ctx &&
        !(await fetchAllowed(ctx as RequestContext<FederationData>, ownerByUsername(a.username)));
      return localActor(ctx, a, { deleting, restricted });
    })
    .mapHandle(async (ctx, username) => {
      if (username === INSTANCE_ACTOR) return INSTANCE_ACTOR;
      return (await localAccount(ctx.data.d, username))?.username ?? null;
    })
    .setKeyPairsDispatcher(async (ctx, identifier) => {
      if (identifier === INSTANCE_ACTOR) return importKeys(await instanceActorKeys(ctx.data.env));
      const a = await localAccount(ctx.data.d, identifier);
      if (!a || (a.deactivated && (await deletionState(ctx.data.d, a.id)) !== "pending")) return [];
      const keys = await actorKeys(ctx.data.d, a.id);
      return keys ? importKeys(keys) : [];
    });
}

function registerWebFingerLinks(builder: FederationBuilder<FederationData>): void {
  // Remote follow: the page where someone with an account here follows or interacts with what `{uri}` names.
  builder.setWebFingerLinksDispatcher((ctx, resource) => {
    const parsed = ctx.parseUri(resource);
    const instanceActor =
      resource.href.toLowerCase().startsWith(`acct:${INSTANCE_ACTOR}@`) ||
      (parsed?.type === "actor" && parsed.identifier === INSTANCE_ACTOR);
    return instanceActor ? [] : [{ rel: SUBSCRIBE_REL, template: subscribeTemplate(ctx.canonicalOrigin) }];
  });
}

/** Followers and following (`relationCollection`). */
function registerRelations(builder: FederationBuilder<FederationData>): void {
  const followers = relationCollection("followers", recipient);
  builder
    .setFollowersDispatcher("/users/{identifier}/followers", (ctx, identifier, cursor) =>
      followers.dispatcher(ctx, identifier, cursor),
    )
    .setCounter((ctx, identifier) => followers.counter(ctx, identifier))
    .setFirstCursor((ctx, identifier) => followers.firstCursor(ctx, identifier))
    .authorize(byOwner);
  const following = relationCollection("following", (a) => new URL(a.uri));
  builder
    .setFollowingDispatcher("/users/{identifier}/following", (ctx, identifier, cursor) =>
      following.dispatcher(ctx, identifier, cursor),
    )
    .setCounter((ctx, identifier) => following.counter(ctx, identifier))
    .setFirstCursor((ctx, identifier) => following.firstCursor(ctx, identifier))
    .authorize(byOwner);
}

function registerStatusObjects(builder: FederationBuilder<FederationData>): void {
  // Statuses at their uri (`/objects/<id>`): only public and unlisted statuses of active local accounts.
  // Followers-only, direct and list statuses are not served (404), even to a signed request (a signature names a
  // server's instance actor more often than a follower); local-only ones never are. Authorized fetch
  // (authorized-fetch.ts) decides who may read at all. A poll is a `Question` served from the same path (Fedify
  // only uses the class to build ids).
  builder
    .setObjectDispatcher(Note, "/objects/{id}", async (ctx, { id }) => {
      const found = await federatedStatus(ctx.data.d, id);
      if (!found || found.h.statuses.get(id)!.reblogOfId) return null;
      return statusObject(noteContext(ctx), found.h, found.parentUris, id) as Note | null;
    })
    .authorize((ctx, { id }) => fetchAllowed(ctx, ownerOfStatus(id)));
  // A reblog's uri (`/activities/<id>`) answers its `Announce`.
  builder
    .setObjectDispatcher(Announce, "/activities/{id}", async (ctx, { id }) => {
      const found = await federatedStatus(ctx.data.d, id);
      if (!found || !found.h.statuses.get(id)!.reblogOfId) return null;
      return announceActivity(noteContext(ctx), found.h, id);
    })
    .authorize((ctx, { id }) => fetchAllowed(ctx, ownerOfStatus(id)));
}

function registerQuoteStamps(builder: FederationBuilder<FederationData>): void {
  // An approved quote's stamp (FEP-044f's `QuoteAuthorization`), at its own id under the quoted author; none
  // (404) once revoked or when either post is gone. Other servers fetch it to check a quote.
  builder
    .setObjectDispatcher(
      QuoteAuthorization,
      "/users/{identifier}/quote_authorizations/{id}",
      async (ctx, { identifier, id }) => {
        const stamp = await localStamp(ctx.data.d, identifier, id);
        if (!stamp) return null;
        return new QuoteAuthorization({
          id: new URL(stamp.authorizationUri),
          attribution: new URL(stamp.authorUri),
          interactingObject: new URL(stamp.quotingUri),
          interactionTarget: new URL(stamp.quotedUri),
        });
      },
    )
    .authorize((ctx, { identifier }) => byOwner(ctx, identifier));
}

function registerOutbox(builder: FederationBuilder<FederationData>): void {
  // The outbox: `Create` of each public and unlisted status and `Announce` of each reblog, newest first, paged by
  // status id (one D1 round trip per page); the count is one more statement on the collection itself.
  builder
    .setOutboxDispatcher("/users/{identifier}/outbox", async (ctx, identifier, cursor) => {
      const a = await liveAccount(ctx, identifier);
      if (!a || cursor === null) return null;
      const page = await outboxPage(ctx.data.d, a.id, cursor === FIRST ? undefined : cursor);
      const nc = noteContext(ctx);
      return {
        items: page.ids.flatMap((sid) => outboxActivity(nc, page.h, page.parentUris, sid) ?? []),
        nextCursor: page.next,
      };
    })
    .setCounter(async (ctx, identifier) => {
      const a = await liveAccount(ctx, identifier);
      return a ? outboxCount(ctx.data.d, a.id) : null;
    })
    .setFirstCursor(async (ctx, identifier) => ((await liveAccount(ctx, identifier)) ? FIRST : null))
    .authorize(byOwner);
}

function registerFeatured(builder: FederationBuilder<FederationData>): void {
  // Featured: the pinned statuses as objects, one unpaged collection (pins are capped at a handful).
  builder
    .setFeaturedDispatcher("/users/{identifier}/collections/featured", async (ctx, identifier) => {
      const a = await liveAccount(ctx, identifier);
      if (!a) return null;
      const found = await featuredStatuses(ctx.data.d, a.id);
      const nc = noteContext(ctx);
      return { items: found.ids.flatMap((sid) => statusObject(nc, found.h, found.parentUris, sid) ?? []) };
    })
    .setCounter(async (ctx, identifier) => {
      const a = await liveAccount(ctx, identifier);
      return a ? featuredCount(ctx.data.d, a.id) : null;
    })
    .authorize(byOwner);
}
