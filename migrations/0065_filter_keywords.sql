-- Mastodon v2 filters (issue 45): a filter has a title and several keywords, and may name statuses. Each existing
-- filter's phrase becomes its one keyword, under the filter's own id (so v1 ids stay what clients hold), and its
-- title. `filters` is small (at most 100 live filters per user), so the copy and the column drops are cheap.
ALTER TABLE `filters` ADD COLUMN `title` text DEFAULT '' NOT NULL;
--> statement-breakpoint
UPDATE `filters` SET `title` = `phrase`;
--> statement-breakpoint
CREATE TABLE `filter_keywords` (
	`id` text PRIMARY KEY NOT NULL,
	`filter_id` text NOT NULL,
	`keyword` text NOT NULL,
	`whole_word` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`filter_id`) REFERENCES `filters`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `filter_keywords_filter` ON `filter_keywords` (`filter_id`);
--> statement-breakpoint
INSERT INTO `filter_keywords` (`id`, `filter_id`, `keyword`, `whole_word`, `created_at`)
  SELECT `id`, `id`, `phrase`, `whole_word`, `created_at` FROM `filters`;
--> statement-breakpoint
CREATE TABLE `filter_statuses` (
	`id` text PRIMARY KEY NOT NULL,
	`filter_id` text NOT NULL,
	`status_id` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`filter_id`) REFERENCES `filters`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `filter_statuses_filter_status` ON `filter_statuses` (`filter_id`, `status_id`);
--> statement-breakpoint
CREATE INDEX `filter_statuses_status` ON `filter_statuses` (`status_id`);
--> statement-breakpoint
ALTER TABLE `filters` DROP COLUMN `phrase`;
--> statement-breakpoint
ALTER TABLE `filters` DROP COLUMN `whole_word`;
