-- Review of services/ (account deletion, finding 1): the deletion job's statements each walk an index instead of a
-- whole table. Each index costs one entry written per row inserted into its table, so the cheaper way is taken
-- where there is one. Building them reads each table once and writes one entry per indexed row, once.
-- A notification about an account (a move, a report's target): few rows, so the partial index holds only them.
CREATE INDEX `notifications_target` ON `notifications` (`target_account_id`) WHERE `target_account_id` IS NOT NULL;
--> statement-breakpoint
-- Deleting a status deletes its notifications: without this, every status deleted anywhere walked them all (as
-- Mastodon, which indexes a notification's activity).
CREATE INDEX `notifications_status` ON `notifications` (`status_id`) WHERE `status_id` IS NOT NULL;
--> statement-breakpoint
-- A report deleted takes its notifications (the foreign key's cascade): only report notifications are indexed.
CREATE INDEX `notifications_report` ON `notifications` (`report_id`) WHERE `report_id` IS NOT NULL;
--> statement-breakpoint
-- A voter's votes: `poll_votes_poll` (poll_id) is the first column of `poll_votes_choice` and serves nothing it
-- does not, so it makes way for this one (no more written per vote than before).
DROP INDEX `poll_votes_poll`;
--> statement-breakpoint
CREATE INDEX `poll_votes_account` ON `poll_votes` (`account_id`);
--> statement-breakpoint
-- A reporter's reports, and a user's short-lived MFA and password-reset tokens: rare rows, written once each.
CREATE INDEX `reports_account` ON `reports` (`account_id`);
--> statement-breakpoint
CREATE INDEX `mfa_tokens_account` ON `mfa_tokens` (`account_id`);
--> statement-breakpoint
CREATE INDEX `password_reset_tokens_account` ON `password_reset_tokens` (`account_id`);
--> statement-breakpoint
-- Set once a pass of the job over the other tables found nothing left: while the actor's Delete is still being
-- delivered, the job then waits without walking them again every minute (a nullable column: no row rewritten).
ALTER TABLE `account_deletions` ADD `rows_cleared_at` integer;
--> statement-breakpoint
-- Finding 8: the job also removes the account's notification permissions (both ways), announcement reads and
-- interaction requests; these serve the sides no key serves (rare rows: an accepted request, a dismissed
-- announcement, a post that needed approval).
CREATE INDEX `notification_permissions_from` ON `notification_permissions` (`from_account_id`);
--> statement-breakpoint
CREATE INDEX `announcement_reads_account` ON `announcement_reads` (`account_id`);
--> statement-breakpoint
CREATE INDEX `interaction_requests_account` ON `interaction_requests` (`account_id`);
--> statement-breakpoint
-- Finding 4: a backup's build is claimed and counted before it starts (as an archive import's step): a build that
-- stops the isolate (memory, CPU) is taken again after its claim expires, and fails after three tries instead of
-- being picked every minute until it expires. Nullable or constant-default columns: no row rewritten.
ALTER TABLE `backups` ADD `attempts` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `backups` ADD `lease_until` integer;
