/**
 * Fedify (@fedify/fedify 2.3.6) mounted in front of the hono app: WebFinger, actors (local accounts and the
 * instance actor), their key pairs, followers/following collections and the inboxes. Anything Fedify does not
 * answer (or answers only for ActivityPub clients, when a browser asks) falls through to the hono app.
 *
 * Dispatchers are registered once per isolate on a builder; the `Federation` itself is built from the
 * bindings (KvStore on D1, MessageQueue on a Durable Object) and cached per bindings object.
 */
import { createFederationBuilder, type Context, type Federation, type RequestContext } from "@fedify/fedify";
import {
  Announce,
  Application,
  Endpoints,
  Group,
  Image,
  Note,
  Person,
  PropertyValue,
  Service,
  Tombstone,
} from "@fedify/vocab";
import { Temporal } from "@js-temporal/polyfill";
import { and, sql } from "drizzle-orm";
import { db, type DB } from "../db/client";
import { accounts, follows } from "../db/schema";
import { config, type Env } from "../env";
import { pemToDer } from "../lib/keys";
import { allowPrivateAddress } from "../lib/outbound";
import { relatedAccounts } from "../services/account-pages";
import { actorKeys } from "../services/credentials";
import { instanceActorKeys } from "../services/instance-keys";
import { mediaUrl, origins } from "../lib/media-urls";
import {
  featuredCount,
  featuredStatuses,
  federatedStatus,
  outboxCount,
  outboxPage,
} from "../services/federated-statuses";
import { announceActivity, outboxActivity, statusObject, type NoteContext } from "./notes";
import { hostMeta } from "./host-meta";
import { emojiTag } from "./emoji-tags";
import { wantsActivityJson } from "../http/negotiate";
import { runEffects } from "../effects";
import { D1KvStore } from "./kv";
import { authenticateInbound } from "./inbound-auth";
import { servedWithFullPublic } from "./public-audience";
import { cachedDocumentLoader, guardedDocumentLoader, signedDocumentLoader, USER_AGENT } from "./loaders";
import { INSTANCE_ACTOR, instanceSigner } from "./instance-actor";
import { registerInbox } from "./inbox";
import { fetchAllowed, ownerByUsername, ownerOfStatus } from "./authorized-fetch";
import { readInboxPost } from "./inbound-guard";
import { deletionState } from "../services/account-deletion";
import { federationRejected } from "../services/federation-policies";
import { refreshSettings } from "../services/instance-settings";
import { subscribeTemplate, SUBSCRIBE_REL } from "../services/remote-interaction";

export interface FederationData {
  env: Env;
  d: DB;
  /** The request's execution context (streams and push after the response); absent outside a request. */
  exec?: { waitUntil(p: Promise<unknown>): void };
  /** Set when a signed GET is refused for who signed it (authorized-fetch.ts): answered 403, not 401. */
  refused?: boolean;
  /** The key id of another server's HTTP signature that carried an inbox POST (a relay's: federation/relays.ts). */
  relayedBy?: string;
}

/** Accounts per page of a followers/following collection. */
const COLLECTION_PAGE = 40;
/** The first page's cursor (pages after it are cursored by the relation row's id). */
const FIRST = "first";

const builder = createFederationBuilder<FederationData>();

/** A local account by nickname, case-insensitively (as WebFinger and the client API look nicknames up). */
/** The actor id of the account an account moved to. */
async function movedToUri(d: DB, id: string): Promise<URL | null> {
  const row = await d
    .select({ uri: accounts.uri })
    .from(accounts)
    .where(sql`${accounts.id} = ${id}`)
    .get();
  return row ? new URL(row.uri) : null;
}

async function localAccount(d: DB, username: string) {
  return (
    (await d
      .select()
      .from(accounts)
      .where(and(sql`${accounts.acctKey} = lower(${username})`, sql`${accounts.domain} IS NULL`))
      .get()) ?? null
  );
}

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

const instant = (ms: number) => Temporal.Instant.fromEpochMilliseconds(ms);

async function instanceActor(ctx: Context<FederationData>) {
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

// Remote follow: the page where someone with an account here follows or interacts with what `{uri}` names.
builder.setWebFingerLinksDispatcher((ctx, resource) => {
  const parsed = ctx.parseUri(resource);
  const instanceActor =
    resource.href.toLowerCase().startsWith(`acct:${INSTANCE_ACTOR}@`) ||
    (parsed?.type === "actor" && parsed.identifier === INSTANCE_ACTOR);
  return instanceActor ? [] : [{ rel: SUBSCRIBE_REL, template: subscribeTemplate(ctx.canonicalOrigin) }];
});

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

/** What the status objects are built with: ids and links hang off the canonical origin (`https://DOMAIN`). */
function noteContext(ctx: Context<FederationData>): NoteContext {
  return { ...origins(ctx.data.env, ctx.canonicalOrigin), followersOf: (username) => ctx.getFollowersUri(username) };
}

/** A live local account whose nickname is exactly `identifier` (collections of anyone else: 404). */
async function liveAccount(ctx: Context<FederationData>, identifier: string) {
  const a = await localAccount(ctx.data.d, identifier);
  return a && !a.deactivated && a.username === identifier ? a : null;
}

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

// The inboxes: Fedify verifies every POST's signature (an unsigned or forged one is 401) and that its key is the
// actor's; the listeners are in federation/inbox.ts. What they have no use for is acknowledged (202) and dropped.
registerInbox(builder);

const built = new WeakMap<object, Promise<Federation<FederationData>>>();

/**
 * The Federation for these bindings. No message queue: Starling sends through its own transactional outbox
 * (federation/delivery.ts), and an incoming activity is handled (or refused) while its sender waits, so nothing is
 * stored for a type Starling does not handle.
 */
async function buildFederation(env: Env): Promise<Federation<FederationData>> {
  const domain = config(env).domain;
  const kv = new D1KvStore(db(env));
  const allowPrivate = allowPrivateAddress(env);
  const userAgent = USER_AGENT;
  const federation = await builder.build({
    kv,
    // Ids are https://DOMAIN/… whatever host a request reached; without DOMAIN (local development only, see
    // `federationRefused`) they are made from the request's origin.
    origin: domain ? `https://${domain}` : undefined,
    // Liberal in what is accepted: `/objects/<id>/` is the same object (the ids Starling hands out have none).
    trailingSlashInsensitive: true,
    // Every document Fedify loads (actors, objects, keys, contexts; signed or not) goes through the SSRF guard.
    // (Fedify refuses `allowPrivateAddress` or `userAgent` together with these factories: the loaders carry both.)
    // Signed as the instance actor (servers in authorized-fetch mode answer nothing else); contexts are not.
    documentLoaderFactory: () => cachedDocumentLoader(kv, allowPrivate, userAgent, () => instanceSigner(env)),
    contextLoaderFactory: () => guardedDocumentLoader(allowPrivate, userAgent),
    authenticatedDocumentLoaderFactory: (identity) => signedDocumentLoader(identity, allowPrivate, userAgent),
    // Signatures are checked before Fedify, by federation/inbound-auth.ts (handleFederated lets no other POST
    // through): Fedify trusts a key document's own claim of who owns it, which lets any server speak for another's
    // actors (issue 28).
    skipSignatureVerification: true,
  });
  // WebFinger lookups (and Fedify's own `sendActivity`, unused: deliveries are federation/delivery.ts's, through the
  // guard) use Fedify's code with the global fetch; WebFinger checks addresses its own way (same rule). It reads
  // the switch (and the User-Agent) from these fields, which the constructor takes only without the factories.
  Object.assign(federation as object, { allowPrivateAddress: allowPrivate, userAgent });
  return federation;
}

function federationFor(env: Env): Promise<Federation<FederationData>> {
  // Cached per bindings object: the builder's dispatchers are stateless and the stores only hold bindings.
  let hit = built.get(env);
  if (!hit) {
    hit = buildFederation(env);
    hit.catch(() => built.delete(env));
    built.set(env, hit);
  }
  return hit;
}

/**
 * Remote documents as their servers serve them now (no cache), through the SSRF guard, signed as the instance
 * actor: for refreshing what a cached copy may have outdated (resolving, an actor's keys, a relayed object).
 */
export const freshDocumentLoader = (env: Env) =>
  guardedDocumentLoader(allowPrivateAddress(env), USER_AGENT, () => instanceSigner(env));

/** A context for code outside a request (tests, later the outbox). */
export async function federationContext(env: Env, base: string) {
  return (await federationFor(env)).createContext(new URL(base), { env, d: db(env) });
}

/** A request's federation context, for routes outside Fedify's dispatchers that still verify signatures. */
export async function federationRequestContext(env: Env, req: Request) {
  return (await federationFor(env)).createContext(req, { env, d: db(env) });
}

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Paths only federation answers (or answers first): discovery, and the inboxes. */
function isFederationPath(req: Request, url: URL): boolean {
  const p = url.pathname.replace(/\/+$/, "");
  if (p === "/.well-known/webfinger" || p === "/.well-known/host-meta" || p === "/.well-known/host-meta.json")
    return true;
  if (p === "/inbox" || /^\/users\/[^/]+\/inbox$/.test(p)) return req.method === "POST";
  if (isDocumentPath(url)) return wantsActivityJson(req.headers.get("accept"));
  return false;
}

/**
 * Ids are permanent, so without DOMAIN the instance federates only on a local host (development): anywhere
 * else federation answers 503 telling the admin to set it, and the client API keeps working.
 */
function federationRefused(env: Env, url: URL): boolean {
  return !config(env).domain && !LOCAL_HOSTS.has(url.hostname) && !url.hostname.endsWith(".localhost");
}

/** Actors, their collections and objects: ActivityStreams to servers, HTML pages (or 404) to people. */
const isDocumentPath = (url: URL) =>
  /^\/(objects|activities)\/[^/]+\/?$/.test(url.pathname) ||
  /^\/users\/[^/]+(\/followers|\/following|\/outbox|\/collections\/featured)?\/?$/.test(url.pathname);

function jsonError(status: number, error: string): Response {
  return new Response(JSON.stringify({ error }), {
    status,
    headers: { "Content-Type": "application/json; charset=utf-8" },
  });
}

/** The host of an incoming activity's `actor` (a string or an object with an id). */
function actorHost(body: unknown): string | null {
  const actor = (body as { actor?: unknown } | null)?.actor;
  const id =
    typeof actor === "string"
      ? actor
      : typeof (actor as { id?: unknown } | null)?.id === "string"
        ? (actor as { id: string }).id
        : null;
  try {
    return id ? new URL(id).hostname : null;
  } catch {
    return null;
  }
}

const isInboxPath = (url: URL) => /^\/(users\/[^/]+\/)?inbox\/?$/.test(url.pathname);

/** The Worker's fetch: federation first, then the hono app. */
export async function handleFederated(
  req: Request,
  env: Env,
  ctx: ExecutionContext,
  app: (req: Request, env: Env, ctx: ExecutionContext) => Response | Promise<Response>,
): Promise<Response> {
  const url = new URL(req.url);
  // Most requests (the client API) never build the federation object.
  const p = url.pathname;
  // A status's page URL asked for as ActivityStreams (a server resolving a pasted link) leads to the object, as
  // Pleroma's `/notice/:id` does; people still get the page.
  const notice = /^\/notice\/([^/]+)\/?$/.exec(p);
  if (notice && req.method === "GET" && wantsActivityJson(req.headers.get("accept"))) {
    return new Response(null, {
      status: 302,
      headers: { Location: new URL(`/objects/${encodeURIComponent(notice[1]!)}`, url).href, Vary: "Accept" },
    });
  }
  if (!(
    p.startsWith("/users/") ||
    p.startsWith("/objects/") ||
    p.startsWith("/activities/") ||
    p.startsWith("/.well-known/webfinger") ||
    p.startsWith("/.well-known/host-meta") ||
    /^\/inbox\/?$/.test(p)
  )) {
    return app(req, env, ctx);
  }
  await refreshSettings(env);
  if (federationRefused(env, url)) {
    if (!isFederationPath(req, url)) return app(req, env, ctx);
    return jsonError(
      503,
      "Federation is disabled: set DOMAIN to this instance's public host name (see docs/configuration.md)",
    );
  }
  const meta = hostMeta(req, url, config(env).domain ? `https://${config(env).domain}` : url.origin);
  if (meta) return meta;
  const federation = await federationFor(env);
  const fallback = (r: Request) => Promise.resolve(app(r, env, ctx));
  // An actor, collection or status Fedify does not serve (unknown; not public, not local, gone) is a 404 to
  // servers, not the web app's 406; browsers still get the pages.
  const notFound = (r: Request) =>
    isDocumentPath(url) && wantsActivityJson(r.headers.get("accept"))
      ? Promise.resolve(jsonError(404, "Record not found"))
      : fallback(r);
  const data: FederationData = { env, d: db(env), exec: ctx };
  // Fedify verifies no signature itself (`skipSignatureVerification`): every request it could take for an inbox
  // delivery must be authenticated here. So an inbox is reached only by POST (Fedify's shared inbox would take any
  // method), and a POST anywhere else goes to the app, never to Fedify.
  if (req.method !== "POST" && /\/inbox\/?$/i.test(url.pathname)) return app(req, env, ctx);
  if (req.method === "POST") {
    if (!isInboxPath(url)) return app(req, env, ctx);
    // Read once, byte for byte (the signature's digest covers these bytes); too large, not JSON, without an
    // actor or nested too deep is refused first (federation/inbound-guard.ts).
    const read = await readInboxPost(req);
    if (read instanceof Response) return read;
    const { bytes, body } = read;
    // A rejected domain (federation policy `reject`, or not on the `accept` list) is dropped unread, its key not
    // even fetched; answered as accepted, as Pleroma does, so its server does not retry.
    const host = actorHost(body);
    if (host && federationRejected(env, host)) return new Response(null, { status: 202 });
    const fctx = federation.createContext(req, data);
    const who = await authenticateInbound(
      new Request(req.url, { method: req.method, headers: req.headers, body: bytes }),
      body,
      {
        documentLoader: fctx.documentLoader,
        freshLoader: freshDocumentLoader(env),
        contextLoader: fctx.contextLoader,
        kv: new D1KvStore(data.d),
      },
    );
    if (!who.ok) {
      if (who.status !== 202) return jsonError(who.status, who.error);
      console.log(`inbox: dropped (${who.error})`);
      return new Response(null, { status: 202 });
    }
    if (who.relayedBy) data.relayedBy = who.relayedBy;
    // What Fedify reads: the authenticated body (its signatures checked and removed), so its length and digest are new.
    const headers = new Headers(req.headers);
    for (const h of ["content-length", "digest", "content-digest"]) headers.delete(h);
    req = new Request(req.url, { method: req.method, headers, body: JSON.stringify(who.body) });
  }
  let res = await federation.fetch(req, { contextData: data, onNotFound: notFound, onNotAcceptable: fallback });
  if (req.method === "GET") res = await servedWithFullPublic(res);
  if (data.refused && res.status === 401) {
    await res.body?.cancel();
    res = jsonError(403, "Forbidden");
  }
  // An accepted activity may have written an answer to the outbox (an Accept, a Reject): send it now rather
  // than at the next sweep, after the response.
  if (req.method === "POST" && res.status < 300 && isInboxPath(url))
    runEffects(env, ctx, url.origin, { federate: true });
  return res;
}
