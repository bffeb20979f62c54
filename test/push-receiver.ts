/**
 * Web Push to a local receiver, for tests that count what was pushed: subscriptions point at
 * `https://push.example/send/<account id>` and `pushReceiver` records every message sent there, handing other
 * fetches to whatever routing was in place.
 */
import { vi } from "vitest";
import { json, type CallOptions, type TestUser } from "./helpers";
import { dnsAnswer } from "./outbound";
import { base64url } from "../src/lib/crypto";

export const PUSH_ENDPOINT = "https://push.example/send/";

/** Starts recording pushes (restore with `vi.restoreAllMocks()`); answers the list they are recorded in. */
export function pushReceiver(): string[] {
  const pushes: string[] = [];
  const routed = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const req = new Request(input as RequestInfo, init);
    // The SSRF guard resolves the endpoint's host: a public address.
    const dns = dnsAnswer(req.url, { "push.example": ["93.184.215.14"] });
    if (dns) return dns;
    if (!req.url.startsWith(PUSH_ENDPOINT)) return routed(req);
    pushes.push(req.url);
    return new Response(null, { status: 201 });
  });
  return pushes;
}

/** Subscribes the user (a fresh P-256 key) to the receiver for mentions, favourites, follows and reblogs. */
export async function subscribePush(u: TestUser, instance?: CallOptions["instance"]) {
  const pair = (await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, [
    "deriveBits",
  ])) as CryptoKeyPair;
  const p256dh = base64url(new Uint8Array((await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer));
  await json("/api/v1/push/subscription", {
    instance,
    token: u.token,
    body: {
      subscription: {
        endpoint: `${PUSH_ENDPOINT}${u.id}`,
        keys: { p256dh, auth: base64url(crypto.getRandomValues(new Uint8Array(16))) },
      },
      data: { alerts: { favourite: true, mention: true, follow: true, reblog: true } },
    },
  });
}
