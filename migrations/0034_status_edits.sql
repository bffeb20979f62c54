-- Editing statuses (issue 31): each version of an edited status, the original included, as Mastodon's
-- status_edits keep them (GET /api/v1/statuses/:id/history). `media` is the attachments as they were (rows as
-- JSON, descriptions included); `poll` the options then. Media an edit took off a local status stay with it
-- (`removed_by_edit`), so its history still shows them, and go with the status.
CREATE TABLE `status_edits` (
	`id` text PRIMARY KEY NOT NULL,
	`status_id` text NOT NULL,
	`content` text NOT NULL,
	`spoiler_text` text DEFAULT '' NOT NULL,
	`sensitive` integer DEFAULT false NOT NULL,
	`emojis` text DEFAULT '[]' NOT NULL,
	`media` text DEFAULT '[]' NOT NULL,
	`poll` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `status_edits_status` ON `status_edits` (`status_id`,`created_at`);
--> statement-breakpoint
ALTER TABLE `media_attachments` ADD `removed_by_edit` integer DEFAULT false NOT NULL;
