-- Translation (issue 47; services/translation.ts). `status_translations`: each status translated once per target
-- language and edit version (`version`: the status's edited_at, 0 when never edited), kept until the status goes
-- (ON DELETE CASCADE) or is translated again after an edit (the older version is deleted then). `translation_days`:
-- the Workers AI neurons spent each UTC day, against the daily budget (TRANSLATION_DAILY_NEURONS).
CREATE TABLE `status_translations` (
	`status_id` text NOT NULL REFERENCES `statuses`(`id`) ON DELETE CASCADE,
	`language` text NOT NULL,
	`version` integer NOT NULL,
	`translation` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY (`status_id`, `language`, `version`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `translation_days` (
	`day` text PRIMARY KEY NOT NULL,
	`neurons` integer DEFAULT 0 NOT NULL
) WITHOUT ROWID;
