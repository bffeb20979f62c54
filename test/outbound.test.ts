/** The SSRF guard (src/lib/outbound.ts): every refusal, each redirect hop, time and size limits, the switch. */
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { allowPrivateAddress, checkOutboundUrl, outboundFetch, OutboundRefused } from "../src/lib/outbound";
import { federationContext } from "../src/federation";
import { dnsAnswer } from "./outbound";

const refuse = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = refuse;
});

const DNS = {
  "public.example": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
  "inside.example": ["10.1.2.3"],
  "mixed.example": ["93.184.215.14", "127.0.0.1"],
  "v6inside.example": ["fd00::5"],
  "mapped.example": ["::ffff:192.168.1.1"],
  "cgnat.example": ["100.64.0.9"],
  "linklocal.example": ["169.254.169.254"],
  "empty.example": [],
  "victim.example": ["93.184.215.20"],
  "evil.example": ["93.184.215.21"],
};

/** A fake network: DNS from the table, pages by URL; records every non-DNS URL fetched. */
function network(pages: Record<string, () => Response | Promise<Response>>) {
  const fetched: string[] = [];
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    const dns = dnsAnswer(req.url, DNS);
    if (dns) return dns;
    fetched.push(req.url);
    const page = pages[req.url];
    if (!page) throw new Error(`unexpected fetch ${req.url}`);
    return page();
  }) as typeof fetch;
  return fetched;
}

const refused = (url: string, allowPrivate = false) =>
  expect(checkOutboundUrl(url, allowPrivate)).rejects.toBeInstanceOf(OutboundRefused);

describe("checkOutboundUrl", () => {
  it("refuses private, loopback, link-local, CGNAT, unique-local and mapped numeric hosts", async () => {
    network({});
    for (const url of [
      "http://127.0.0.1/",
      "http://2130706433/", // 127.0.0.1 as one number
      "http://0x7f.1/",
      "http://0.0.0.0/",
      "http://10.0.0.1/",
      "http://172.16.5.4/",
      "http://192.168.0.1/",
      "http://169.254.169.254/latest/meta-data",
      "http://100.64.1.1/",
      "http://[::1]/",
      "http://[::]/",
      "http://[fc00::1]/",
      "http://[fd12:3456::1]/",
      "http://[fe80::1]/",
      "http://[::ffff:127.0.0.1]/",
      "http://[::ffff:a00:1]/",
      "http://[64:ff9b::a9fe:a9fe]/",
      "http://[2002:c0a8:101::1]/",
      "http://localhost/",
      "http://foo.localhost/",
      "http://printer.local/",
      "http://metadata.google.internal/",
      "http://intranet/",
      "ftp://public.example/",
      "http://user:pw@public.example/",
      "not a url",
    ]) {
      await refused(url);
    }
  });

  it("resolves names and refuses those with any non-public address, or none", async () => {
    network({});
    for (const host of [
      "inside.example",
      "mixed.example",
      "v6inside.example",
      "mapped.example",
      "cgnat.example",
      "linklocal.example",
      "empty.example",
      "nxdomain.example",
    ]) {
      await refused(`https://${host}/x`);
    }
    await expect(checkOutboundUrl("https://public.example/x", false)).resolves.toBeUndefined();
    await expect(checkOutboundUrl("https://93.184.215.14/x", false)).resolves.toBeUndefined();
    await expect(checkOutboundUrl("https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/", false)).resolves.toBeUndefined();
  });

  it("lets private and loopback hosts through only with the development switch, which is off by default", async () => {
    network({});
    expect(allowPrivateAddress({})).toBe(false);
    expect(allowPrivateAddress({ ALLOW_PRIVATE_ADDRESS: "1" })).toBe(false);
    expect(allowPrivateAddress({ ALLOW_PRIVATE_ADDRESS: "false" })).toBe(false);
    expect(allowPrivateAddress({ ALLOW_PRIVATE_ADDRESS: "true" })).toBe(true);
    expect(allowPrivateAddress(env)).toBe(false);
    for (const url of ["http://127.0.0.1:8787/", "https://localhost/", "https://inside.example/", "http://[::1]/"]) {
      await expect(checkOutboundUrl(url, true)).resolves.toBeUndefined();
    }
    // Not a license for other schemes or credentials.
    await refused("file:///etc/passwd", true);
    await refused("http://u:p@127.0.0.1/", true);
  });
});

describe("outboundFetch", () => {
  it("never fetches a refused URL", async () => {
    const fetched = network({ "http://10.0.0.1/": () => new Response("secret") });
    await expect(outboundFetch("http://10.0.0.1/", undefined, { allowPrivate: false })).rejects.toBeInstanceOf(
      OutboundRefused,
    );
    await expect(outboundFetch("https://inside.example/", undefined, { allowPrivate: false })).rejects.toBeInstanceOf(
      OutboundRefused,
    );
    expect(fetched).toEqual([]);
  });

  it("checks every redirect hop and bounds the number of hops", async () => {
    const to = (location: string) => () => new Response(null, { status: 302, headers: { Location: location } });
    const fetched = network({
      "https://public.example/a": to("/b"),
      "https://public.example/b": () => new Response("ok"),
      "https://public.example/evil": to("http://169.254.169.254/latest/meta-data"),
      "https://public.example/evil2": to("https://inside.example/"),
      "https://public.example/loop": to("/loop"),
    });
    const res = await outboundFetch("https://public.example/a", undefined, { allowPrivate: false });
    expect(await res.text()).toBe("ok");
    await expect(
      outboundFetch("https://public.example/evil", undefined, { allowPrivate: false }),
    ).rejects.toBeInstanceOf(OutboundRefused);
    await expect(
      outboundFetch("https://public.example/evil2", undefined, { allowPrivate: false }),
    ).rejects.toBeInstanceOf(OutboundRefused);
    await expect(outboundFetch("https://public.example/loop", undefined, { allowPrivate: false })).rejects.toThrow(
      /redirects/,
    );
    expect(fetched.filter((u) => u.includes("169.254") || u.includes("inside"))).toEqual([]);
    expect(fetched.filter((u) => u.endsWith("/loop"))).toHaveLength(4);
    // maxRedirects 0: the redirect itself is the answer (the caller follows it, checking each hop).
    const raw = await outboundFetch("https://public.example/evil", undefined, { allowPrivate: false, maxRedirects: 0 });
    expect(raw.status).toBe(302);
  });

  it("caps the body and times out", async () => {
    network({
      "https://public.example/big": () => new Response("x".repeat(5000)),
      "https://public.example/declared": () =>
        new Response("x".repeat(5000), { headers: { "Content-Length": "5000" } }),
      "https://public.example/slow": () => new Promise<Response>(() => {}),
      "https://public.example/small": () => new Response("fine"),
    });
    const big = await outboundFetch("https://public.example/big", undefined, { allowPrivate: false, maxBytes: 1000 });
    await expect(big.text()).rejects.toThrow(/larger than 1000 bytes/);
    await expect(
      outboundFetch("https://public.example/declared", undefined, { allowPrivate: false, maxBytes: 1000 }),
    ).rejects.toThrow(/larger/);
    expect(
      await (
        await outboundFetch("https://public.example/small", undefined, { allowPrivate: false, maxBytes: 1000 })
      ).text(),
    ).toBe("fine");
    const started = Date.now();
    await expect(
      outboundFetch("https://public.example/slow", undefined, { allowPrivate: false, timeoutMs: 200 }),
    ).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("fetches private addresses with the development switch", async () => {
    network({ "http://127.0.0.1:8787/x": () => new Response("local") });
    expect(await (await outboundFetch("http://127.0.0.1:8787/x", undefined, { allowPrivate: true })).text()).toBe(
      "local",
    );
  });
});

describe("Fedify's document loaders go through the guard", () => {
  const actor = (id: string) => () =>
    new Response(
      JSON.stringify({
        "@context": "https://www.w3.org/ns/activitystreams",
        id,
        type: "Person",
        preferredUsername: "x",
        inbox: `${id}/inbox`,
      }),
      {
        headers: { "Content-Type": "application/activity+json" },
      },
    );

  it("refuses an actor on a name that resolves to a private address, and loads it with the switch", async () => {
    const id = `https://inside.example/users/x${Date.now()}`;
    const fetched = network({ [id]: actor(id) });
    const ctx = await federationContext(env, "https://localhost");
    expect(await ctx.lookupObject(id)).toBeNull();
    await expect(ctx.documentLoader(id)).rejects.toBeInstanceOf(OutboundRefused);
    expect(fetched).toEqual([]);

    const dev = await federationContext({ ...env, ALLOW_PRIVATE_ADDRESS: "true" }, "https://localhost");
    const found = await dev.lookupObject(id);
    expect(found?.id?.href).toBe(id);
    expect(fetched).toEqual([id]);
  });

  it("takes a redirected document as coming from where it was served, not from the URL asked for", async () => {
    const asked = `https://victim.example/redirect?to=${Date.now()}`;
    const served = `https://evil.example/doc${Date.now()}`;
    const forged = `https://victim.example/objects/${Date.now()}`;
    network({
      [asked]: () => new Response(null, { status: 302, headers: { Location: served } }),
      [served]: actor(forged),
    });
    const ctx = await federationContext(env, "https://localhost");
    const doc = await ctx.documentLoader(asked);
    // Fedify checks an object's id against this URL: the evil server cannot pass its document off as the victim's.
    expect(doc.documentUrl).toBe(served);
    expect((await ctx.lookupObject(asked))?.id?.href).not.toBe(forged);
  });

  it("loads a public actor, and signed fetches are guarded too", async () => {
    const id = `https://public.example/users/p${Date.now()}`;
    const fetched = network({ [id]: actor(id) });
    const ctx = await federationContext(env, "https://localhost");
    expect((await ctx.lookupObject(id))?.id?.href).toBe(id);
    const signed = await ctx.getDocumentLoader({ identifier: "internal.fetch" });
    await expect(signed("http://192.168.1.1/users/x")).rejects.toBeInstanceOf(OutboundRefused);
    expect(fetched).toEqual([id]);
  });
});
