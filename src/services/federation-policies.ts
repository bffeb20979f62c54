/**
 * Federation policies applied to what comes IN (Pleroma's MRF SimplePolicy in spirit): the rows are edited
 * through the admin config API (`:mrf_simple`, src/services/settings.ts) and read from this isolate's copy.
 * Rejection itself is checked at the inbox door (federation/door/handle.ts), in resolving (resolve.ts) and, for what
 * goes OUT, in delivery expansion (federation/delivery/, in SQL).
 */
import type { DB } from "../db/client";
import type { ParsedNote } from "./remote-statuses";
import { federationRejected, hasPolicy } from "./settings";

const bindingOf = (d: DB) => ({ DB: d.$client });

/** Whether anything from `host` is refused (rejected, or outside the allow-list). */
export const rejectedHost = (d: DB, host: string) => federationRejected(bindingOf(d), host);

/**
 * A remote note as the policies of its author's domain allow it: attachments stripped (`media_removal`), marked
 * sensitive (`media_nsfw`, when it has media), and kept off the federated timeline (`federated_timeline_removal`:
 * public becomes unlisted, as Pleroma moves the public address from `to` to `cc`).
 */
export function applyNotePolicies(d: DB, host: string, note: ParsedNote): ParsedNote {
  const env = bindingOf(d);
  let n = note;
  if (n.media.length && hasPolicy(env, host, "media_removal")) n = { ...n, media: [] };
  if (n.media.length && hasPolicy(env, host, "media_nsfw")) n = { ...n, sensitive: true };
  if (n.visibility === "public" && hasPolicy(env, host, "federated_timeline_removal"))
    n = { ...n, visibility: "unlisted" };
  return n;
}

/** A remote actor's images as the policies allow: `avatar_removal`, `banner_removal`. */
export function applyActorPolicies<T extends { avatar: string | null; header: string | null }>(
  d: DB,
  host: string,
  f: T,
): T {
  const env = bindingOf(d);
  let out = f;
  if (hasPolicy(env, host, "avatar_removal")) out = { ...out, avatar: null };
  if (hasPolicy(env, host, "banner_removal")) out = { ...out, header: null };
  return out;
}

/** Whether reports (`Flag`s) from `host` are dropped (`report_removal`). */
export const reportsRemoved = (d: DB, host: string) => hasPolicy(bindingOf(d), host, "report_removal");
