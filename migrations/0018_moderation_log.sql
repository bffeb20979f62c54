-- The admin API's moderation log (src/services/moderation-log.ts). Written by hand; the lead reconciles meta.
CREATE TABLE `moderation_log` (
	`id` text PRIMARY KEY NOT NULL,
	`actor_id` text NOT NULL,
	`action` text NOT NULL,
	`data` text DEFAULT '{}' NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `moderation_log_actor` ON `moderation_log` (`actor_id`,`id`);
