/**
 * Opting in and out of the Bluesky bridge, for the API (routes/pleroma/bluesky-bridge.ts) and the settings page
 * (routes/settings-bluesky.ts) alike: the rule is services/bluesky-bridge.ts; what is here is the look-up of the
 * bridge's account over federation and the hand-over of the effects.
 */
import { db } from "../db/client";
import { resolveAccount, resolveEnv } from "../federation/fetching/resolve";
import { after, type Ctx } from "../http/route";
import { baseUrl, hostOf } from "../http/urls";
import { notFound } from "../lib/errors";
import type { AccountRow } from "../services/accounts";
import { BRIDGE_ACTOR, connectBridge, disconnectBridge } from "../services/bluesky-bridge";

/** Opting in: the bridge's account looked up over federation (stored for a day), then followed. */
export async function optIn(c: Ctx, account: AccountRow): Promise<void> {
  const r = resolveEnv(c.env, baseUrl(c), hostOf(c), (e) => after(c, e));
  const found = await resolveAccount(r, BRIDGE_ACTOR, { background: c.executionCtx });
  // As Pleroma's follow by URI answers an account it cannot resolve (a 5xx would read as Starling's fault).
  if (!found) throw notFound("The Bluesky bridge could not be reached; try again later.");
  after(c, (await connectBridge(db(c.env), account, found.account)).effects);
}

/** Opting out: the bridge's account unfollowed. */
export async function optOut(c: Ctx, account: AccountRow): Promise<void> {
  const result = await disconnectBridge(db(c.env), account);
  if (result) after(c, result.effects);
}
