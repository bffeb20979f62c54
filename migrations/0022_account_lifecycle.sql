-- Account lifecycle (issue 16): deletion jobs and backups. Written by hand; the lead reconciles meta.
-- `accounts.also_known_as`, `accounts.moved_to_account_id` and `users.allow_following_move` already exist.
CREATE TABLE `account_deletions` (
	`account_id` text PRIMARY KEY NOT NULL,
	`requested_by` text,
	`statuses_deleted` integer DEFAULT 0 NOT NULL,
	`requested_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`finished_at` integer
);
--> statement-breakpoint
CREATE INDEX `account_deletions_pending` ON `account_deletions` (`requested_at`) WHERE `finished_at` IS NULL;
--> statement-breakpoint
CREATE TABLE `backups` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL REFERENCES `accounts`(`id`) ON DELETE cascade,
	`state` text DEFAULT 'pending' NOT NULL,
	`file_key` text NOT NULL,
	`size` integer DEFAULT 0 NOT NULL,
	`base` text DEFAULT '' NOT NULL,
	`created_at` integer NOT NULL,
	`processed_at` integer
);
--> statement-breakpoint
CREATE INDEX `backups_account` ON `backups` (`account_id`,`id`);
--> statement-breakpoint
CREATE INDEX `backups_pending` ON `backups` (`created_at`) WHERE `state` = 'pending';
--> statement-breakpoint
-- What the cron's follower-moving job walks: the (few) accounts that moved.
CREATE INDEX `accounts_moved` ON `accounts` (`moved_to_account_id`) WHERE `moved_to_account_id` IS NOT NULL;
