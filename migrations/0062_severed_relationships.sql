-- Issue 48: Mastodon 4.3's "severed relationships" (services/severed-relationships.ts). When a domain block (an
-- admin's suspension, or a user's own block) severs follows of local users, the severing batch writes one event
-- row, and one row per local user who lost follows or followers (never one per follow): its counts, and the lost
-- follows themselves as JSON arrays, for the CSV the user may download. The per-user row's id is its
-- notification's (a `severed_relationships` notification). New, empty tables: nothing is rewritten.
CREATE TABLE `relationship_severance_events` (
	`id` text PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`target_name` text NOT NULL,
	`purged` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL
);--> statement-breakpoint
CREATE TABLE `severed_relationships` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL REFERENCES `accounts`(`id`) ON DELETE cascade,
	`event_id` text NOT NULL REFERENCES `relationship_severance_events`(`id`) ON DELETE cascade,
	`followers_count` integer DEFAULT 0 NOT NULL,
	`following_count` integer DEFAULT 0 NOT NULL,
	`followers` text DEFAULT '[]' NOT NULL,
	`following` text DEFAULT '[]' NOT NULL,
	`created_at` integer NOT NULL
);--> statement-breakpoint
CREATE INDEX `severed_relationships_account` ON `severed_relationships` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `severed_relationships_event` ON `severed_relationships` (`event_id`);
