-- Chats (issue 14): one row per unordered pair (a_id < b_id), each side's unread count, last read and cleared
-- marks; messages ordered by id. Written by hand; the lead reconciles meta.
CREATE TABLE `chats` (
	`id` text PRIMARY KEY NOT NULL,
	`a_id` text NOT NULL REFERENCES `accounts`(`id`) ON DELETE cascade,
	`b_id` text NOT NULL REFERENCES `accounts`(`id`) ON DELETE cascade,
	`a_unread` integer DEFAULT 0 NOT NULL,
	`b_unread` integer DEFAULT 0 NOT NULL,
	`a_last_read_id` text,
	`b_last_read_id` text,
	`a_cleared_id` text,
	`b_cleared_id` text,
	`a_open` integer DEFAULT 1 NOT NULL,
	`b_open` integer DEFAULT 1 NOT NULL,
	`last_message_id` text,
	`sort_key` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `chats_pair` ON `chats` (`a_id`,`b_id`);
--> statement-breakpoint
CREATE INDEX `chats_a` ON `chats` (`a_id`,`sort_key`);
--> statement-breakpoint
CREATE INDEX `chats_b` ON `chats` (`b_id`,`sort_key`);
--> statement-breakpoint
CREATE TABLE `chat_messages` (
	`id` text PRIMARY KEY NOT NULL,
	`chat_id` text NOT NULL REFERENCES `chats`(`id`) ON DELETE cascade,
	`account_id` text NOT NULL REFERENCES `accounts`(`id`) ON DELETE cascade,
	`content` text DEFAULT '' NOT NULL,
	`emojis` text DEFAULT '[]' NOT NULL,
	`media_id` text,
	`unread` integer DEFAULT 1 NOT NULL,
	`uri` text,
	`idempotency_key` text,
	`idempotency_at` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `chat_messages_chat` ON `chat_messages` (`chat_id`,`id`);
--> statement-breakpoint
CREATE INDEX `chat_messages_idempotency` ON `chat_messages` (`chat_id`,`account_id`,`idempotency_key`) WHERE idempotency_key IS NOT NULL;
--> statement-breakpoint
CREATE UNIQUE INDEX `chat_messages_uri` ON `chat_messages` (`uri`) WHERE uri IS NOT NULL;
--> statement-breakpoint
ALTER TABLE `media_attachments` ADD `chat_message_id` text;
--> statement-breakpoint
DROP INDEX `media_unattached`;
--> statement-breakpoint
CREATE INDEX `media_unattached` ON `media_attachments` (`created_at`) WHERE status_id IS NULL AND scheduled_status_id IS NULL AND chat_message_id IS NULL;
--> statement-breakpoint
ALTER TABLE `notifications` ADD `chat_message_id` text;
