-- Issue 42: what a stored status costs in D1 rows.
-- An inbound post looks up its thread by `context`; without an index that read every status (20,000 rows at
-- 20,000 statuses).
CREATE INDEX `statuses_context` ON `statuses` (`context`);--> statement-breakpoint
-- Each index holding every status is a row written per status. These are only ever searched for a value, never
-- walked for NULL, so they hold only the statuses that have one.
DROP INDEX `statuses_expires`;--> statement-breakpoint
CREATE INDEX `statuses_expires` ON `statuses` (`expires_at`) WHERE expires_at IS NOT NULL;--> statement-breakpoint
DROP INDEX `statuses_reply`;--> statement-breakpoint
CREATE INDEX `statuses_reply` ON `statuses` (`in_reply_to_id`) WHERE in_reply_to_id IS NOT NULL;--> statement-breakpoint
DROP INDEX `statuses_reblog_of`;--> statement-breakpoint
CREATE INDEX `statuses_reblog_of` ON `statuses` (`reblog_of_id`) WHERE reblog_of_id IS NOT NULL;--> statement-breakpoint
DROP INDEX `statuses_search`;--> statement-breakpoint
CREATE INDEX `statuses_search` ON `statuses` (`search_rowid`) WHERE search_rowid IS NOT NULL;--> statement-breakpoint
-- Accounts whose statuses readers pull (services/feeds.ts): home reads visit the followed ones among these few
-- instead of probing every followed account.
ALTER TABLE `accounts` ADD `home_pull` integer DEFAULT false NOT NULL;--> statement-breakpoint
UPDATE `accounts` SET `home_pull` = 1 WHERE `id` IN (SELECT DISTINCT `account_id` FROM `statuses` WHERE `home_pull` = 1);--> statement-breakpoint
CREATE INDEX `accounts_home_pull` ON `accounts` (`id`) WHERE home_pull = 1;
