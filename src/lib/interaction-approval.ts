/**
 * Whether a local user may reply to, like or boost a remote post whose `interactionPolicy` restricts it (issue
 * 49; GoToSocial's interaction controls, docs/federation/interaction_controls.md there): the one rule, read by
 * posting, favouriting and reblogging (services/approval-requests.ts).
 * - `automatic`: anyone may (the public, or this very actor, in `automaticApproval`; a reply by someone the post
 *   mentions, as GoToSocial assumes): sent as it always was.
 * - `request`: the author must approve first (`manualApproval` names the user or a collection they are in, or
 *   `automaticApproval` lets them in only as a follower or followee, which third servers cannot check): a polite
 *   request goes to the author alone, and the interaction waits.
 * - `denied`: the policy lets nobody but those it names, and the user is not among them.
 */
import type { InteractionKind, InteractionRule, InteractionRules } from "../db/schema";

export type Approval = "automatic" | "request" | "denied";

/** What the rule needs to know of the user and the post's author. */
export interface Asker {
  uri: string;
  /** The user follows the post's author (is in their `followers`). */
  follows: boolean;
  /** The post's author follows the user (the user is in their `following`). */
  followedBy: boolean;
  /** The post mentions the user. */
  mentioned: boolean;
}

export function approvalFor(rules: InteractionRules | null, kind: InteractionKind, me: Asker): Approval {
  const rule: InteractionRule | undefined = rules?.[kind];
  if (!rule) return "automatic";
  // The most specific entry wins: the user named in `manual` asks even when `auto` lets the public in.
  if (rule.manual.includes(me.uri) && !rule.auto.includes(me.uri)) return "request";
  if (rule.auto.includes("public") || rule.auto.includes(me.uri)) return "automatic";
  if (kind === "reply" && me.mentioned) return "automatic";
  const inCollection = (list: string[]) =>
    (list.includes("followers") && me.follows) || (list.includes("following") && me.followedBy);
  if (inCollection(rule.auto)) return "request";
  if (rule.manual.includes("public") || inCollection(rule.manual)) return "request";
  return "denied";
}
