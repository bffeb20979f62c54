-- Federation-ready data (issue 13), written by hand.
-- 1. ActivityPub ids of activities: Accept/Undo/Reject from other servers name the activity they answer by its id.
--    Local activities get `<actor uri>#<kind>/<row id>` (`localActivityUri` in src/services/accounts.ts; the
--    backfill below writes the same form). Remote rows whose id is unknown keep NULL (unique indexes allow many).
ALTER TABLE `follows` ADD `uri` text;--> statement-breakpoint
ALTER TABLE `follow_requests` ADD `uri` text;--> statement-breakpoint
ALTER TABLE `blocks` ADD `uri` text;--> statement-breakpoint
ALTER TABLE `favourites` ADD `uri` text;--> statement-breakpoint
ALTER TABLE `emoji_reactions` ADD `uri` text;--> statement-breakpoint
UPDATE `follows` SET `uri` = (SELECT a.`uri` || '#follows/' || `follows`.`id` FROM `accounts` a WHERE a.`id` = `follows`.`account_id` AND a.`domain` IS NULL);--> statement-breakpoint
UPDATE `follow_requests` SET `uri` = (SELECT a.`uri` || '#follows/' || `follow_requests`.`id` FROM `accounts` a WHERE a.`id` = `follow_requests`.`account_id` AND a.`domain` IS NULL);--> statement-breakpoint
UPDATE `blocks` SET `uri` = (SELECT a.`uri` || '#blocks/' || `blocks`.`id` FROM `accounts` a WHERE a.`id` = `blocks`.`account_id` AND a.`domain` IS NULL);--> statement-breakpoint
UPDATE `favourites` SET `uri` = (SELECT a.`uri` || '#likes/' || `favourites`.`id` FROM `accounts` a WHERE a.`id` = `favourites`.`account_id` AND a.`domain` IS NULL);--> statement-breakpoint
UPDATE `emoji_reactions` SET `uri` = (SELECT a.`uri` || '#reactions/' || `emoji_reactions`.`id` FROM `accounts` a WHERE a.`id` = `emoji_reactions`.`account_id` AND a.`domain` IS NULL);--> statement-breakpoint
CREATE UNIQUE INDEX `follows_uri` ON `follows` (`uri`);--> statement-breakpoint
CREATE UNIQUE INDEX `follow_requests_uri` ON `follow_requests` (`uri`);--> statement-breakpoint
CREATE UNIQUE INDEX `blocks_uri` ON `blocks` (`uri`);--> statement-breakpoint
CREATE UNIQUE INDEX `favourites_uri` ON `favourites` (`uri`);--> statement-breakpoint
CREATE UNIQUE INDEX `emoji_reactions_uri` ON `emoji_reactions` (`uri`);--> statement-breakpoint
-- 2. Custom emoji keyed by (shortcode, domain): domain NULL is this instance's; a remote emoji keeps its URL.
--    The shortcode was the primary key, so the table is rebuilt.
CREATE TABLE `custom_emojis_new` (
	`shortcode` text NOT NULL,
	`domain` text,
	`file` text NOT NULL,
	`url` text,
	`category` text,
	`visible_in_picker` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `custom_emojis_new` (`shortcode`, `domain`, `file`, `url`, `category`, `visible_in_picker`, `created_at`)
	SELECT `shortcode`, NULL, `file`, NULL, `category`, `visible_in_picker`, `created_at` FROM `custom_emojis`;--> statement-breakpoint
DROP TABLE `custom_emojis`;--> statement-breakpoint
ALTER TABLE `custom_emojis_new` RENAME TO `custom_emojis`;--> statement-breakpoint
-- NULLs are distinct in a unique index: the local domain is keyed as ''.
CREATE UNIQUE INDEX `custom_emojis_key` ON `custom_emojis` (`shortcode`,ifnull(`domain`, ''));--> statement-breakpoint
-- A status stores the emoji its text resolved to when it was written ([{shortcode, domain, file,
-- visible_in_picker}]), and is rendered from them: a remote `:blob:` never shows this instance's `blob`.
ALTER TABLE `statuses` ADD `emojis` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
UPDATE `statuses` SET `emojis` = (
	SELECT json_group_array(json(r.`e`)) FROM (
		SELECT json_object('shortcode', e.`shortcode`, 'domain', NULL, 'file', e.`file`,
			'visible_in_picker', json(CASE WHEN e.`visible_in_picker` THEN 'true' ELSE 'false' END)) AS `e`
		FROM json_each(`statuses`.`emoji_shortcodes`) j JOIN `custom_emojis` e ON e.`shortcode` = j.`value` AND e.`domain` IS NULL
		ORDER BY j.`key`
	) r
) WHERE `local` = 1 AND `emoji_shortcodes` <> '[]';--> statement-breakpoint
ALTER TABLE `statuses` DROP COLUMN `emoji_shortcodes`;--> statement-breakpoint
-- 3. Counters of remote accounts and statuses are what their server reports; local recounts skip them (code).
--    `fetched_at`: when a remote account was last fetched from its server (NULL for local accounts).
ALTER TABLE `accounts` ADD `fetched_at` integer;--> statement-breakpoint
-- 4. Other servers: where to deliver, what they run, and whether they answer.
CREATE TABLE `instances` (
	`domain` text PRIMARY KEY NOT NULL,
	`shared_inbox` text,
	`software_name` text,
	`software_version` text,
	`failure_count` integer DEFAULT 0 NOT NULL,
	`last_failure_at` integer,
	`last_success_at` integer,
	`created_at` integer NOT NULL
);
