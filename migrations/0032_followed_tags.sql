-- Hashtags a user follows (GET/POST /api/v1/tags/:name, /api/v1/followed_tags): home reads pull their public
-- posts per followed tag on `status_tags_tag`, and the user stream carries them (issue 29).
CREATE TABLE `followed_tags` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`tag` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `followed_tags_pair` ON `followed_tags` (`account_id`,`tag`);
--> statement-breakpoint
CREATE INDEX `followed_tags_account` ON `followed_tags` (`account_id`,`id`);
