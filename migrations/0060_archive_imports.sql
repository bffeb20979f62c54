-- Archive imports (issue 50; services/archive-import.ts). `archive_imports`: one uploaded Mastodon or Pleroma
-- archive (its zip in the PRIVATE bucket) and how far the cron got with it. `imported_statuses`: which status an
-- archive's post became, keyed by the post's original id, so a second import adds nothing; deleted with the status.
-- Two new tables: nothing existing is read or rewritten.
CREATE TABLE `archive_imports` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`state` text DEFAULT 'queued' NOT NULL,
	`file_key` text NOT NULL,
	`size` integer DEFAULT 0 NOT NULL,
	`base` text DEFAULT '' NOT NULL,
	`found` integer DEFAULT 0 NOT NULL,
	`total` integer DEFAULT 0 NOT NULL,
	`position` integer DEFAULT 0 NOT NULL,
	`imported` integer DEFAULT 0 NOT NULL,
	`media` integer DEFAULT 0 NOT NULL,
	`media_skipped` integer DEFAULT 0 NOT NULL,
	`skipped` text DEFAULT '{}' NOT NULL,
	`paused` text,
	`error` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`lease_until` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `archive_imports_account` ON `archive_imports` (`account_id`,`id`);
--> statement-breakpoint
CREATE INDEX `archive_imports_active` ON `archive_imports` (`id`) WHERE state IN ('queued', 'importing');
--> statement-breakpoint
CREATE TABLE `imported_statuses` (
	`account_id` text NOT NULL,
	`original_uri` text NOT NULL,
	`status_id` text NOT NULL,
	PRIMARY KEY(`account_id`, `original_uri`),
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE INDEX `imported_statuses_status` ON `imported_statuses` (`status_id`);
