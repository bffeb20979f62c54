CREATE TABLE `home_feed` (
	`account_id` text NOT NULL,
	`status_id` text NOT NULL,
	`author_id` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `home_feed_pair` ON `home_feed` (`account_id`,`status_id`);--> statement-breakpoint
CREATE INDEX `home_feed_status` ON `home_feed` (`status_id`);--> statement-breakpoint
DROP INDEX `statuses_public`;--> statement-breakpoint
ALTER TABLE `statuses` ADD `search_rowid` integer;--> statement-breakpoint
CREATE INDEX `statuses_search` ON `statuses` (`search_rowid`);--> statement-breakpoint
CREATE INDEX `statuses_public_tl` ON `statuses` (`id`) WHERE reblog_of_id IS NULL AND visibility IN ('public', 'local');--> statement-breakpoint
CREATE INDEX `statuses_public_local_tl` ON `statuses` (`local`,`id`) WHERE reblog_of_id IS NULL AND visibility IN ('public', 'local');