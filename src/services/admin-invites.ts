/** Invites made by staff (Pleroma 2.5's `AdminAPI.InviteController`); registration redeems them (registration.ts). */
import { desc, eq } from "drizzle-orm";
import type { DB } from "../db/client";
import { mixedBatch, now } from "../db/client";
import { iso } from "../lib/iso";
import { newId } from "../db/ids";
import { invites } from "../db/schema";
import { notFound } from "../lib/errors";
import { randomToken, sha256 } from "../lib/crypto";
import { logEntry, type Actor } from "./moderation-log";
import { queueMail } from "./mail-queue";
import type { Config } from "../env";

export type InviteRow = typeof invites.$inferSelect;

/** Pleroma's `UserInviteToken` JSON; `invite_type` follows from the limits. */
export function renderInvite(r: InviteRow) {
  const limited = r.maxUses !== null && r.maxUses > 1;
  const type =
    r.expiresAt !== null ? (limited ? "reusable_date_limited" : "date_limited") : limited ? "reusable" : "one_time";
  const exhausted = r.maxUses !== null && r.uses >= r.maxUses;
  return {
    id: r.id,
    token: r.token ?? "",
    used: r.revoked || exhausted,
    // Pleroma keeps a date (`2019-04-12`), the day the invite lapses.
    expires_at: r.expiresAt === null ? null : iso(r.expiresAt).slice(0, 10),
    uses: r.uses,
    max_use: r.maxUses,
    invite_type: type,
  } as const;
}

export async function createInvite(
  d: DB,
  actor: Actor,
  opts: { maxUse?: number; expiresAt?: number },
  /** Mail the invite (a one-use one) to this address: queued in the invite's batch. */
  mailTo?: { cfg: Config; base: string; email: string; name?: string },
): Promise<InviteRow> {
  const t = now();
  const token = randomToken(16);
  const row: InviteRow = {
    id: newId(t),
    tokenHash: await sha256(token),
    token,
    maxUses: opts.maxUse ?? 1,
    uses: 0,
    expiresAt: opts.expiresAt ?? null,
    createdAt: t,
    revoked: false,
  };
  await mixedBatch(d, [
    d.insert(invites).values(row),
    logEntry(
      d,
      actor,
      "invite_create",
      { subject: { id: row.id, type: "invite" } },
      `@${actor.username} created an invite token`,
      t,
    ),
    ...(mailTo
      ? [
          queueMail(
            d,
            mailTo.cfg,
            mailTo.base,
            inviteMail(mailTo.cfg.name, mailTo.base, token, mailTo.email, mailTo.name),
          ),
        ]
      : []),
  ]);
  return row;
}

export async function listInvites(d: DB): Promise<InviteRow[]> {
  return d.select().from(invites).orderBy(desc(invites.id)).limit(500);
}

export async function revokeInvite(d: DB, actor: Actor, token: string): Promise<InviteRow> {
  const row = await d
    .select()
    .from(invites)
    .where(eq(invites.tokenHash, await sha256(token)))
    .get();
  if (!row) throw notFound("Not found");
  const t = now();
  await mixedBatch(d, [
    d.update(invites).set({ revoked: true }).where(eq(invites.id, row.id)),
    logEntry(
      d,
      actor,
      "invite_revoke",
      { subject: { id: row.id, type: "invite" } },
      `@${actor.username} revoked an invite token`,
      t,
    ),
  ]);
  return { ...row, revoked: true };
}

function inviteMail(instanceName: string, base: string, token: string, to: string, name?: string) {
  const link = `${base}/registration/${token}`;
  const hello = name ? `Hello ${name},` : "Hello,";
  return {
    to,
    subject: `Invitation to ${instanceName}`,
    text: `${hello}\n\nYou are invited to ${instanceName}. Register here:\n${link}\n`,
    html: `<p>${escapeHtml(hello)}</p><p>You are invited to ${escapeHtml(instanceName)}. Register here:</p><p><a href="${link}">${link}</a></p>`,
  };
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
