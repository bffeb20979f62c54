/**
 * Durable mail. An action that mails someone writes the message as a `mail_queue` row in its own batch
 * (`queueMail`) and says so in its `Effects` (`mail`); the effects door sends what is due after the answer
 * (`sendQueuedMail`), and the cron's `mail` job sends what is still due, so a lost isolate loses no mail. A send
 * that fails is tried again later (`next_at`, doubled each attempt) and given up after `MAX_ATTEMPTS`.
 */
import { sql, type SQL } from "drizzle-orm";
import type { Config, Env } from "../env";
import { now, statement, type DB } from "../db/client";
import { newId } from "../db/ids";
import { mailQueue } from "../db/schema";
import { fromAddress, mailer, type Mail } from "./mailer";

/** Mails sent per drain: each is a subrequest with the Cloudflare mailer. */
const SENDS_PER_DRAIN = 10;
/** The first retry waits this long, each later one twice the one before, up to `MAX_WAIT_MS`. */
const FIRST_WAIT_MS = 60_000;
const MAX_WAIT_MS = 6 * 3600_000;
/** Attempts before a mail is given up (about a day of retries). */
export const MAX_ATTEMPTS = 10;

/** The insert of a mail to send, to put in the action's batch (`base`: this instance's URL, for the sender). */
export function queueMail(d: DB, cfg: Config, base: string, mail: Mail, t: number = now()) {
  const from = fromAddress(cfg, new URL(base || "http://localhost").host);
  return d.insert(mailQueue).values({ id: newId(t), from, ...mail, nextAt: t, createdAt: t });
}

/** `queueMail` as a D1 statement, for batches of hand-written statements. */
export function queueMailStatement(d: DB, cfg: Config, base: string, mail: Mail, t: number = now()) {
  return statement(d, queueMail(d, cfg, base, mail, t));
}

/**
 * The insert of one mail to every active admin (at most 20, as `adminEmails`), to put in the action's batch;
 * `onlyIf` is evaluated by the statement itself (e.g. `changes() > 0`: the batch's previous statement claimed
 * the warning).
 */
export function queueAdminMail(
  d: DB,
  cfg: Config,
  base: string,
  mail: Omit<Mail, "to">,
  t: number = now(),
  onlyIf: SQL = sql`1`,
): D1PreparedStatement {
  const from = fromAddress(cfg, new URL(base || "http://localhost").host);
  return statement(
    d,
    sql`INSERT INTO mail_queue (id, "from", "to", subject, text, html, next_at, created_at)
      SELECT ${newId(t)} || '-' || u.account_id, ${from}, u.email, ${mail.subject}, ${mail.text}, ${mail.html}, ${t}, ${t}
      FROM users u JOIN accounts a ON a.id = u.account_id
      WHERE u.is_admin = 1 AND a.deactivated = 0 AND u.email != '' AND ${onlyIf} LIMIT 20`,
  );
}

type Claimed = { id: string; from: string; to: string; subject: string; text: string; html: string; attempts: number };

/**
 * Sends the mail that is due, a bounded number. Each row is claimed first (its next attempt moved ahead, in one
 * statement), so two drains never send it twice; sent rows are deleted, failed ones keep their error and wait.
 * With nothing due it reads no row: the probe walks the `next_at` index from the start.
 */
export async function sendQueuedMail(env: Env, d: DB, t: number = now(), max = SENDS_PER_DRAIN): Promise<number> {
  const claimed = await d.all<Claimed>(sql`
    UPDATE mail_queue SET attempts = attempts + 1,
      next_at = ${t} + min(${FIRST_WAIT_MS} << min(attempts, 20), ${MAX_WAIT_MS})
    WHERE id IN (SELECT id FROM mail_queue WHERE next_at <= ${t} ORDER BY next_at LIMIT ${max})
    RETURNING id, "from", "to", subject, text, html, attempts`);
  if (!claimed.length) return 0;
  // A transport that cannot be made (no binding) fails each send alike, so each row records why.
  const outcomes = await Promise.allSettled(
    claimed.map(async (m) => mailer(env).send(m.from, { to: m.to, subject: m.subject, text: m.text, html: m.html })),
  );
  const done: string[] = [];
  const failed: { id: string; error: string }[] = [];
  outcomes.forEach((o, i) => {
    const m = claimed[i]!;
    if (o.status === "fulfilled") return done.push(m.id);
    const error = (o.reason instanceof Error ? o.reason.message : String(o.reason)).slice(0, 500);
    console.error(`mail to ${m.to} (${JSON.stringify(m.subject)}), attempt ${m.attempts}: ${error}`);
    if (m.attempts >= MAX_ATTEMPTS) done.push(m.id);
    else failed.push({ id: m.id, error });
  });
  await d.$client.batch([
    statement(d, sql`DELETE FROM mail_queue WHERE id IN (SELECT value FROM json_each(${JSON.stringify(done)}))`),
    ...failed.map((f) => statement(d, sql`UPDATE mail_queue SET last_error = ${f.error} WHERE id = ${f.id}`)),
  ]);
  return done.length;
}
