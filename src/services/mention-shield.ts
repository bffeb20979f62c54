/**
 * The mention shield (issue 45), after Pleroma's AntiMentionSpamPolicy and GoToSocial's spam filter: a spam wave
 * comes from fresh remote accounts mentioning many people with a link or an image. A mention from a remote account
 * is filtered (into the recipient's notification requests, services/notification-policy.ts; never dropped) when
 * - the account is younger than `SHIELD_NEW_ACCOUNT_DAYS` (its `published`, else when it was first seen here), or
 * - nobody here follows it, or
 * - its post mentions `SHIELD_MENTIONS` accounts or more and carries a link or media,
 * unless the recipient follows the sender, the post answers the recipient or sits in a thread the recipient
 * started, or the recipient accepted the sender's notifications before. An admin turns it off with the run-time
 * setting `mention_shield` (off by default, as Pleroma's policy: it sets aside every first mention from a
 * stranger nobody here follows).
 */
import { sql, type SQL } from "drizzle-orm";

/** The run-time setting's row in instance_settings, which the notifying statement reads itself. */
export const MENTION_SHIELD_KEY = "mention_shield";
export const SHIELD_NEW_ACCOUNT_DAYS = 7;
export const SHIELD_MENTIONS = 5;
const DAY = 86_400_000;

/** Whether the recipient follows the sender (the shield and the policy both let those through). */
export const follows = (who: SQL, whom: SQL): SQL =>
  sql`EXISTS (SELECT 1 FROM follows sf WHERE sf.account_id = ${who} AND sf.target_account_id = ${whom})`;

/** Whether the status answers the recipient or belongs to a thread the recipient started. */
export const inOwnThread = (to: SQL, statusId: SQL): SQL =>
  sql`EXISTS (SELECT 1 FROM statuses ts WHERE ts.id = ${statusId} AND (ts.in_reply_to_account_id = ${to}
    OR EXISTS (SELECT 1 FROM statuses tr WHERE tr.id = ts.thread_id AND tr.account_id = ${to})))`;

/**
 * The shield's condition on a mention notification (recipient, sender, status, time): true means filter. Read
 * cost: the setting's row, the sender's row, then index look-ups that stop at the first row found.
 */
export function shielded(to: SQL, from: SQL, statusId: SQL, t: SQL): SQL {
  const hrefs = sql`(length(ss.content) - length(replace(ss.content, 'href=', ''))) / 5`;
  const mentions = sql`(SELECT count(*) FROM status_recipients sm WHERE sm.status_id = ss.id AND sm.mention = 1)`;
  const tags = sql`(SELECT count(*) FROM status_tags stg WHERE stg.status_id = ss.id)`;
  return sql`(EXISTS (SELECT 1 FROM instance_settings WHERE key = ${MENTION_SHIELD_KEY} AND value = 'true')
    AND EXISTS (SELECT 1 FROM accounts sa WHERE sa.id = ${from} AND sa.domain IS NOT NULL AND (
      sa.created_at > ${t} - ${SHIELD_NEW_ACCOUNT_DAYS * DAY}
      OR NOT EXISTS (SELECT 1 FROM follows sfl WHERE sfl.target_account_id = sa.id)
      OR EXISTS (SELECT 1 FROM statuses ss WHERE ss.id = ${statusId} AND ${mentions} >= ${SHIELD_MENTIONS}
        AND (ss.has_media = 1 OR ${hrefs} > ${mentions} + ${tags}))))
    AND NOT ${follows(to, from)}
    AND NOT ${inOwnThread(to, statusId)})`;
}
