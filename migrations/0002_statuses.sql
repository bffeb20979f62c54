CREATE TABLE `bookmarks` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`status_id` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `bookmarks_pair` ON `bookmarks` (`account_id`,`status_id`);--> statement-breakpoint
CREATE INDEX `bookmarks_status` ON `bookmarks` (`status_id`,`id`);--> statement-breakpoint
CREATE INDEX `bookmarks_account` ON `bookmarks` (`account_id`,`id`);--> statement-breakpoint
CREATE TABLE `conversations` (
	`id` text PRIMARY KEY NOT NULL,
	`thread_id` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `conversations_thread` ON `conversations` (`thread_id`);--> statement-breakpoint
CREATE TABLE `custom_emojis` (
	`shortcode` text PRIMARY KEY NOT NULL,
	`file` text NOT NULL,
	`category` text,
	`visible_in_picker` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `emoji_reactions` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`status_id` text NOT NULL,
	`emoji` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `emoji_reactions_triple` ON `emoji_reactions` (`status_id`,`account_id`,`emoji`);--> statement-breakpoint
CREATE INDEX `emoji_reactions_account` ON `emoji_reactions` (`account_id`);--> statement-breakpoint
CREATE TABLE `favourites` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`status_id` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `favourites_pair` ON `favourites` (`account_id`,`status_id`);--> statement-breakpoint
CREATE INDEX `favourites_status` ON `favourites` (`status_id`,`id`);--> statement-breakpoint
CREATE INDEX `favourites_account` ON `favourites` (`account_id`,`id`);--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`account_id` text NOT NULL,
	`key` text NOT NULL,
	`result` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `idempotency_keys_pair` ON `idempotency_keys` (`account_id`,`key`);--> statement-breakpoint
CREATE INDEX `idempotency_keys_created` ON `idempotency_keys` (`created_at`);--> statement-breakpoint
CREATE TABLE `link_cards` (
	`url` text PRIMARY KEY NOT NULL,
	`data` text,
	`fetched_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `media_attachments` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`status_id` text,
	`scheduled_status_id` text,
	`file` text NOT NULL,
	`remote_url` text,
	`mime_type` text NOT NULL,
	`type` text NOT NULL,
	`description` text,
	`size` integer DEFAULT 0 NOT NULL,
	`position` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `media_status` ON `media_attachments` (`status_id`);--> statement-breakpoint
CREATE INDEX `media_account` ON `media_attachments` (`account_id`,`id`);--> statement-breakpoint
CREATE TABLE `participations` (
	`id` text PRIMARY KEY NOT NULL,
	`conversation_id` text NOT NULL,
	`account_id` text NOT NULL,
	`recipients` text DEFAULT '[]' NOT NULL,
	`unread` integer DEFAULT true NOT NULL,
	`last_status_id` text,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`conversation_id`) REFERENCES `conversations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `participations_pair` ON `participations` (`conversation_id`,`account_id`);--> statement-breakpoint
CREATE INDEX `participations_account` ON `participations` (`account_id`,`updated_at`);--> statement-breakpoint
CREATE TABLE `poll_votes` (
	`id` text PRIMARY KEY NOT NULL,
	`poll_id` text NOT NULL,
	`account_id` text NOT NULL,
	`choice` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`poll_id`) REFERENCES `polls`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `poll_votes_choice` ON `poll_votes` (`poll_id`,`account_id`,`choice`);--> statement-breakpoint
CREATE INDEX `poll_votes_poll` ON `poll_votes` (`poll_id`);--> statement-breakpoint
CREATE TABLE `polls` (
	`id` text PRIMARY KEY NOT NULL,
	`status_id` text NOT NULL,
	`options` text NOT NULL,
	`multiple` integer DEFAULT false NOT NULL,
	`hide_totals` integer DEFAULT false NOT NULL,
	`expires_at` integer,
	`closed_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `polls_status` ON `polls` (`status_id`);--> statement-breakpoint
CREATE INDEX `polls_expires` ON `polls` (`expires_at`);--> statement-breakpoint
CREATE TABLE `scheduled_statuses` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`scheduled_at` integer NOT NULL,
	`params` text NOT NULL,
	`app_id` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `scheduled_due` ON `scheduled_statuses` (`scheduled_at`);--> statement-breakpoint
CREATE INDEX `scheduled_account` ON `scheduled_statuses` (`account_id`,`scheduled_at`);--> statement-breakpoint
CREATE TABLE `status_recipients` (
	`status_id` text NOT NULL,
	`account_id` text NOT NULL,
	`mention` integer DEFAULT true NOT NULL,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `status_recipients_pair` ON `status_recipients` (`status_id`,`account_id`);--> statement-breakpoint
CREATE INDEX `status_recipients_account` ON `status_recipients` (`account_id`,`status_id`);--> statement-breakpoint
CREATE TABLE `status_tags` (
	`status_id` text NOT NULL,
	`tag` text NOT NULL,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `status_tags_pair` ON `status_tags` (`status_id`,`tag`);--> statement-breakpoint
CREATE INDEX `status_tags_tag` ON `status_tags` (`tag`,`status_id`);--> statement-breakpoint
CREATE TABLE `statuses` (
	`id` text PRIMARY KEY NOT NULL,
	`uri` text NOT NULL,
	`url` text NOT NULL,
	`account_id` text NOT NULL,
	`in_reply_to_id` text,
	`in_reply_to_account_id` text,
	`reblog_of_id` text,
	`thread_id` text NOT NULL,
	`context` text NOT NULL,
	`content` text DEFAULT '' NOT NULL,
	`text` text DEFAULT '' NOT NULL,
	`content_type` text DEFAULT 'text/plain' NOT NULL,
	`spoiler_text` text DEFAULT '' NOT NULL,
	`visibility` text NOT NULL,
	`list_id` text,
	`sensitive` integer DEFAULT false NOT NULL,
	`language` text,
	`app_id` text,
	`local` integer NOT NULL,
	`has_media` integer DEFAULT false NOT NULL,
	`card_url` text,
	`emoji_shortcodes` text DEFAULT '[]' NOT NULL,
	`replies_count` integer DEFAULT 0 NOT NULL,
	`reblogs_count` integer DEFAULT 0 NOT NULL,
	`favourites_count` integer DEFAULT 0 NOT NULL,
	`pinned_at` integer,
	`expires_at` integer,
	`created_at` integer NOT NULL,
	`edited_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `statuses_uri` ON `statuses` (`uri`);--> statement-breakpoint
CREATE INDEX `statuses_account` ON `statuses` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `statuses_reply` ON `statuses` (`in_reply_to_id`);--> statement-breakpoint
CREATE INDEX `statuses_thread` ON `statuses` (`thread_id`,`id`);--> statement-breakpoint
CREATE INDEX `statuses_public` ON `statuses` (`visibility`,`id`);--> statement-breakpoint
CREATE INDEX `statuses_expires` ON `statuses` (`expires_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `statuses_reblog` ON `statuses` (`account_id`,`reblog_of_id`) WHERE reblog_of_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX `statuses_reblog_of` ON `statuses` (`reblog_of_id`);--> statement-breakpoint
CREATE TABLE `thread_mutes` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`thread_id` text NOT NULL,
	`expires_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `thread_mutes_pair` ON `thread_mutes` (`account_id`,`thread_id`);--> statement-breakpoint
CREATE INDEX `thread_mutes_expires` ON `thread_mutes` (`expires_at`);