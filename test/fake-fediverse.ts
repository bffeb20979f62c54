/**
 * A fake fediverse for tests: remote servers answering WebFinger and ActivityPub documents through the global
 * `fetch` (which the Worker under test shares). Documents are served by URL, WebFinger from a table of handles;
 * DNS over HTTPS is answered from a table (`test/outbound.ts`) when one is given, for tests with the SSRF guard
 * on. Anything else goes to the fetch it replaced (e.g. `routeFetch()` or the test refusal). Every non-DNS URL
 * asked is recorded. Call `restore()` after the test.
 */
import { dnsAnswer, type DnsTable } from "./outbound";
import gotosocial from "./fixtures/federation/actors/gotosocial.json";
import litepub from "./fixtures/federation/actors/litepub-context.json";
import mastodon from "./fixtures/federation/actors/mastodon.json";
import misskey from "./fixtures/federation/actors/misskey.json";
import pleroma from "./fixtures/federation/actors/pleroma.json";

export const ACTOR_FIXTURES = { mastodon, pleroma, misskey, gotosocial } as const;
/** The host each fixture was written for. */
const FIXTURE_HOST = {
  mastodon: "mastodon.test",
  pleroma: "pleroma.test",
  misskey: "misskey.test",
  gotosocial: "gts.test",
} as const;

/** A fixture moved to `host` (storage is shared by a test run: each test uses hosts of its own). */
export function actorFixture(name: keyof typeof ACTOR_FIXTURES, host: string): Record<string, any> {
  const from = FIXTURE_HOST[name];
  const text = JSON.stringify(ACTOR_FIXTURES[name])
    .replaceAll(`//${from}/`, `//${host}/`)
    .replaceAll(`//files.${from}/`, `//files.${host}/`);
  return JSON.parse(text);
}

/** Pleroma's litepub context, served by the Pleroma fixture's own host. */
export const litepubContext = litepub;

export type Doc = Record<string, unknown> | (() => Response | Promise<Response>);

export interface FakeFediverse {
  /** Served documents by URL (replace one to change what a server answers). */
  docs: Map<string, Doc>;
  /** `user@host` (as asked) -> the actor URL WebFinger names. */
  handles: Map<string, string>;
  fetched: string[];
  restore(): void;
}

/** An OrderedCollection reporting `totalItems`, as followers/following/outbox are served. */
export const collection = (id: string, totalItems: number) => ({
  "@context": "https://www.w3.org/ns/activitystreams",
  id,
  type: "OrderedCollection",
  totalItems,
  first: `${id}?page=1`,
});

export function fakeFediverse(
  opts: { docs?: Record<string, Doc>; handles?: Record<string, string>; dns?: DnsTable } = {},
): FakeFediverse {
  const previous = globalThis.fetch;
  const docs = new Map(Object.entries(opts.docs ?? {}));
  // Handles are case-insensitive, as WebFinger servers treat them.
  const handles = new Map(Object.entries(opts.handles ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const fetched: string[] = [];
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    if (opts.dns) {
      const dns = dnsAnswer(req.url, opts.dns);
      if (dns) return dns;
    }
    const url = new URL(req.url);
    if (url.pathname === "/.well-known/webfinger") {
      const resource = (url.searchParams.get("resource") ?? "").replace(/^acct:/, "");
      const href = handles.get(resource.toLowerCase());
      const host = resource.split("@")[1];
      if (host === url.host && href) {
        fetched.push(req.url);
        return Response.json(
          { subject: `acct:${resource}`, links: [{ rel: "self", type: "application/activity+json", href }] },
          { headers: { "Content-Type": "application/jrd+json" } },
        );
      }
      if ([...handles.keys()].some((h) => h.split("@")[1] === url.host)) {
        fetched.push(req.url);
        return new Response("not found", { status: 404 });
      }
    }
    const doc = docs.get(req.url);
    if (doc === undefined) return previous(input, init);
    fetched.push(req.url);
    if (typeof doc === "function") return doc();
    return new Response(JSON.stringify(doc), { headers: { "Content-Type": "application/activity+json" } });
  }) as typeof fetch;
  return {
    docs,
    handles,
    fetched,
    restore() {
      globalThis.fetch = previous;
    },
  };
}

/**
 * A remote server at `host` with one actor (a fixture moved there, or any document with its id), WebFinger for
 * `user@host`, and its three collections reporting the given counts (`null`: that collection answers 401, as
 * servers with authorized fetch do to an unsigned GET).
 */
export function actorServer(
  actor: Record<string, any>,
  counts: { followers: number | null; following: number | null; outbox: number | null } = {
    followers: 0,
    following: 0,
    outbox: 0,
  },
): { docs: Record<string, Doc>; handles: Record<string, string> } {
  const id = actor.id as string;
  const host = new URL(id).host;
  const docs: Record<string, Doc> = { [id]: actor };
  for (const k of ["followers", "following", "outbox"] as const) {
    const url = actor[k] as string | undefined;
    if (!url) continue;
    const n = counts[k];
    docs[url] = n === null ? () => new Response('{"error":"Request not signed"}', { status: 401 }) : collection(url, n);
  }
  if (String(actor["@context"]).includes("litepub-0.1.jsonld"))
    docs[`https://${host}/schemas/litepub-0.1.jsonld`] = () =>
      new Response(JSON.stringify(litepub), { headers: { "Content-Type": "application/ld+json" } });
  return { docs, handles: { [`${actor.preferredUsername}@${host}`]: id } };
}
