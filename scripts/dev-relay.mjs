// A throwaway Mastodon-style relay for the manual check in docs/federation.md ("Through a relay"), not part of the
// Worker: it accepts Follows of the public collection at /inbox, answers Accept, and forwards Creates, Updates and
// Deletes to the other subscribers under its own HTTP signature (draft-cavage), as pub-relay does. It verifies
// nothing it receives: a development tool only.
//
//   NODE_EXTRA_CA_CERTS=/tmp/devca/ca.pem node scripts/dev-relay.mjs   (PORT=8803 and CERTS=/tmp/devca by default)
import https from "node:https";
import { readFileSync } from "node:fs";
import { signRequest } from "@fedify/fedify";

const PORT = Number(process.env.PORT || 8803);
const CA = process.env.CERTS || "/tmp/devca";
const ORIGIN = `https://127.0.0.1:${PORT}`;
const ACTOR = `${ORIGIN}/actor`;
const keys = await crypto.subtle.generateKey(
  { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
  true,
  ["sign", "verify"],
);
const spki = Buffer.from(await crypto.subtle.exportKey("spki", keys.publicKey)).toString("base64");
const pem = `-----BEGIN PUBLIC KEY-----\n${spki.match(/.{1,64}/g).join("\n")}\n-----END PUBLIC KEY-----\n`;
const subscribers = new Map(); // actor -> inbox

async function post(inbox, body) {
  const req = new Request(inbox, { method: "POST", headers: { "Content-Type": "application/activity+json" }, body });
  const signed = await signRequest(req, keys.privateKey, new URL(`${ACTOR}#main-key`));
  const res = await fetch(signed);
  console.log("POST", inbox, res.status, (await res.text()).slice(0, 200));
}

https
  .createServer({ key: readFileSync(`${CA}/server.key`), cert: readFileSync(`${CA}/server.pem`) }, async (req, res) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    console.log(req.method, req.url);
    if (req.method === "GET" && req.url.startsWith("/actor")) {
      res.writeHead(200, { "Content-Type": "application/activity+json" });
      return res.end(
        JSON.stringify({
          "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"],
          id: ACTOR,
          type: "Application",
          preferredUsername: "relay",
          inbox: `${ORIGIN}/inbox`,
          publicKey: { id: `${ACTOR}#main-key`, owner: ACTOR, publicKeyPem: pem },
        }),
      );
    }
    if (req.method === "POST" && req.url === "/inbox") {
      res.writeHead(202);
      res.end();
      const body = JSON.parse(raw);
      console.log("  <-", body.type, body.actor, body.object?.id ?? body.object);
      if (body.type === "Follow") {
        const actor = await (await fetch(body.actor, { headers: { Accept: "application/activity+json" } })).json();
        subscribers.set(body.actor, actor.endpoints?.sharedInbox ?? actor.inbox);
        await post(
          actor.inbox,
          JSON.stringify({
            "@context": "https://www.w3.org/ns/activitystreams",
            id: `${ACTOR}#accepts/${Date.now()}`,
            type: "Accept",
            actor: ACTOR,
            object: body,
          }),
        );
      } else if (body.type === "Undo") {
        subscribers.delete(body.actor);
      } else if (["Create", "Update", "Delete"].includes(body.type)) {
        const from = new URL(body.actor).origin;
        for (const [actor, inbox] of subscribers) if (new URL(actor).origin !== from) await post(inbox, raw);
      }
      return;
    }
    res.writeHead(404);
    res.end();
  })
  .listen(PORT, "127.0.0.1", () => console.log("relay on", ORIGIN));
