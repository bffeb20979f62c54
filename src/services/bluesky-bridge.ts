/**
 * The Bluesky bridge (Bridgy Fed, issue 49): a user opts in by following its bot account
 * `@bsky.brid.gy@bsky.brid.gy`, which follows back; the account is then bridged if it meets Bridgy's checklist
 * (https://fed.brid.gy/docs: a profile picture, at least a week old by the actor's `published`, public posts, no
 * `#nobridge` in the bio) and its follow-back is accepted. Unfollowing opts out. This module says where a user
 * stands, and opts in and out (the API and the settings page both call it) through the graph's follow and
 * unfollow (services/graph.ts), as for any account.
 */
import { sql } from "drizzle-orm";
import type { DB } from "../db/client";
import type { AccountRow, UserRow } from "./accounts";
import * as graph from "./graph";
import { accountByUri } from "./remote-accounts";

/** The bridge's bot account (its actor id and handle, as Bridgy Fed serves them). */
export const BRIDGE_ACTOR = "https://bsky.brid.gy/bsky.brid.gy";
export const BRIDGE_HANDLE = "bsky.brid.gy@bsky.brid.gy";
/** Bridgy's own redirect for a handle at a domain of the user's (docs: "custom domain handles"). */
export const BRIDGE_ATPROTO_DID = "https://bsky.brid.gy/.well-known/atproto-did";

const WEEK_MS = 7 * 24 * 3600_000;

export interface ChecklistItem {
  key: "avatar" | "account_age" | "public_posts" | "no_nobridge" | "follow_back";
  ok: boolean;
  message: string;
}

export interface BridgeState {
  /** Following the bridge (its Accept arrived). */
  connected: boolean;
  /** A follow of the bridge sent, not accepted yet. */
  pending: boolean;
  /** The bridge follows back (accepted). */
  followed_back: boolean;
  bridge: string;
  /** The handle Bridgy gives the account on Bluesky: `user.instance.ap.brid.gy`. */
  bluesky_handle: string;
  checklist: ChecklistItem[];
  /** The keys of the checklist items not met yet. */
  missing: ChecklistItem["key"][];
}

/** Where `me` stands with the bridge: one statement (the bridge's account by uri, four pair look-ups). */
export async function bridgeState(d: DB, me: AccountRow, user: UserRow, localHost: string): Promise<BridgeState> {
  // Each a probe of a pair's unique index, whatever the number of follows.
  const bridge = sql`(SELECT id FROM accounts WHERE uri = ${BRIDGE_ACTOR})`;
  const row = await d.get<{ following: number; requested: number; back: number; back_requested: number }>(
    sql`SELECT EXISTS (SELECT 1 FROM follows WHERE account_id = ${me.id} AND target_account_id = ${bridge}) AS following,
        EXISTS (SELECT 1 FROM follow_requests WHERE account_id = ${me.id} AND target_account_id = ${bridge}) AS requested,
        EXISTS (SELECT 1 FROM follows WHERE account_id = ${bridge} AND target_account_id = ${me.id}) AS back,
        EXISTS (SELECT 1 FROM follow_requests WHERE account_id = ${bridge} AND target_account_id = ${me.id}) AS back_requested`,
  );
  const following = !!row?.following;
  const checklist = bridgeChecklist(me, user, {
    followedBack: !!row?.back,
    followBackWaiting: !!row?.back_requested,
  });
  return {
    connected: following,
    pending: !following && !!row?.requested,
    followed_back: !!row?.back,
    bridge: BRIDGE_HANDLE,
    bluesky_handle: `${me.username}.${localHost.replace(/:\d+$/, "")}.ap.brid.gy`.toLowerCase(),
    checklist,
    missing: checklist.filter((i) => !i.ok).map((i) => i.key),
  };
}

/** Bridgy Fed's checklist for a fediverse account, from what the account shows (pure). */
export function bridgeChecklist(
  me: AccountRow,
  user: UserRow,
  back: { followedBack: boolean; followBackWaiting: boolean },
  t = Date.now(),
): ChecklistItem[] {
  return [
    { key: "avatar", ok: !!me.avatar, message: "Add a profile picture." },
    {
      key: "account_age",
      ok: t - me.createdAt >= WEEK_MS,
      message: "Your account must be at least a week old.",
    },
    {
      key: "public_posts",
      ok: user.defaultScope === "public",
      message: "Post publicly: only public posts are bridged (set your default visibility to public).",
    },
    {
      key: "no_nobridge",
      ok: !/#no(bridge|bot)\b/i.test(me.note),
      message: "Remove #nobridge (or #nobot) from your bio.",
    },
    {
      key: "follow_back",
      ok: back.followedBack,
      message: back.followBackWaiting
        ? "Accept the bridge's follow request."
        : "The bridge has not followed you back yet (it does after your follow is accepted).",
    },
  ];
}

/** Whether the local account `username` follows the bridge (its handle at a subdomain may then be served). */
export async function bridgedAccountUri(d: DB, username: string): Promise<string | null> {
  const row = await d.get<{ uri: string }>(
    sql`SELECT a.uri FROM accounts a WHERE a.acct_key = lower(${username}) AND a.domain IS NULL AND NOT a.deactivated
      AND EXISTS (SELECT 1 FROM follows f WHERE f.account_id = a.id
        AND f.target_account_id = (SELECT id FROM accounts WHERE uri = ${BRIDGE_ACTOR}))`,
  );
  return row?.uri ?? null;
}

/** Opting in: following the bridge's account (`bridge`, looked up over federation by the caller). */
export const connectBridge = (d: DB, me: AccountRow, bridge: AccountRow) => graph.follow(d, me, bridge, {});

/** Opting out: unfollowing the bridge's account (nothing to do when it was never stored). */
export async function disconnectBridge(d: DB, me: AccountRow): Promise<graph.GraphResult | null> {
  const bridge = await accountByUri(d, BRIDGE_ACTOR);
  return bridge ? graph.unfollow(d, me, bridge) : null;
}
