/**
 * One door, no side exits (issue 43): work after the answer starts at the effects door (src/effects/index.ts:
 * `runEffects`, and `background` for work that is no action's effect), and mail leaves from the mail queue
 * (src/services/mail-queue.ts), which the door and the cron drain; delivery wakes from the outbox rows a batch
 * wrote (src/db/outbox-signal.ts). This check reads every source file and fails on a `waitUntil` call, a mail send
 * or a `federate` flag set anywhere else. Run by `npm test` with Node's test runner.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";

const SRC = join(import.meta.dirname, "..", "src");

/** Where each exit may be used, and nowhere else. */
const ALLOWED = {
  // The door itself; and the meter's wrapper of the runtime's context, which forwards calls to count their work.
  waitUntil: ["effects/index.ts", "effects/background.ts", "lib/meter.ts"],
  // The transport (its two mailers), and the queue that alone calls it.
  mailer: ["services/mailer.ts", "services/mail-queue.ts"],
  // The development mailer's table: written by that mailer only (the collector deletes from it).
  mailOutbox: ["services/mailer.ts"],
  // Delivery wakes when a batch queued outbox rows (db/outbox-signal.ts); the flag is set from that mark alone,
  // for a Durable Object's answer, and merged by the effects' own module.
  federate: ["services/outbox.ts", "services/effects.ts"],
};

/** A call of `waitUntil` (`ctx.waitUntil(`, `this.waitUntil(`, `?.waitUntil(`), not a type's declaration of one. */
const WAIT_UNTIL = /\.\s*waitUntil\s*\(/;
/** The transport: its factory, the Email Routing binding's send, the platform's message. */
const MAIL_SEND = /\bmailer\s*\(|\bEMAIL\s*\??\.\s*send\s*\(|cloudflare:email|\bEmailMessage\b/;
/** A write into the development mailer's table. */
const OUTBOX_WRITE = /insert\s*\(\s*mailOutbox\s*\)|INSERT\s+INTO\s+["`]?mail_outbox/i;
/** `federate` set by hand: as a property (`federate: x`, `{ federate }`) or assigned (`e.federate = x`). */
const FEDERATE_SET = /\bfederate\s*:|[{,]\s*federate\s*[,}]|\.federate\s*=[^=]/;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.ts$/.test(name) && !name.endsWith(".generated.ts") ? [path] : [];
  });
}

/** The file's lines that match, comments left out (a comment may name the exits). */
function uses(text: string, pattern: RegExp): number[] {
  const code = text
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " "))
    .split("\n")
    .map((line) => line.replace(/(^|[^:])\/\/.*$/, "$1"));
  return code.flatMap((line, i) => (pattern.test(line) ? [i + 1] : []));
}

function exits(pattern: RegExp, allowed: string[]): string[] {
  return sources(SRC).flatMap((path) => {
    const file = relative(SRC, path).replaceAll("\\", "/");
    if (allowed.includes(file)) return [];
    return uses(readFileSync(path, "utf8"), pattern).map((line) => `src/${file}:${line}`);
  });
}

test("waitUntil is called by the effects door alone", () => {
  assert.deepEqual(exits(WAIT_UNTIL, ALLOWED.waitUntil), []);
});

test("mail is sent by the mail queue alone (actions queue it in their batch)", () => {
  assert.deepEqual(exits(MAIL_SEND, ALLOWED.mailer), []);
  assert.deepEqual(exits(OUTBOX_WRITE, ALLOWED.mailOutbox), []);
});

test("delivery is woken by the outbox rows a batch wrote, not by a flag an action sets", () => {
  assert.deepEqual(exits(FEDERATE_SET, ALLOWED.federate), []);
});

test("the check sees what it forbids", () => {
  assert.deepEqual(uses("ctx.waitUntil(p);\nexec?.waitUntil(x)\n// ctx.waitUntil(p)", WAIT_UNTIL), [1, 2]);
  assert.deepEqual(uses("waitUntil(p: Promise<unknown>): void;", WAIT_UNTIL), []);
  assert.deepEqual(uses("await mailer(env).send(from, m);\n/* mailer(env) */", MAIL_SEND), [1]);
  assert.deepEqual(uses("await env.EMAIL.send(msg)", MAIL_SEND), [1]);
  assert.deepEqual(uses("d.insert(mailOutbox).values(x)", OUTBOX_WRITE), [1]);
  assert.deepEqual(
    uses(
      "effects: { push: true, federate: true }\nreturn { federate };\ne.federate = on;\nfederate?: boolean;\nif (e.federate === true) x;",
      FEDERATE_SET,
    ),
    [1, 2, 3],
  );
  // Every allowed file exists (a renamed door must be renamed here too).
  for (const file of Object.values(ALLOWED).flat()) assert.ok(statSync(join(SRC, file)).isFile(), file);
});
