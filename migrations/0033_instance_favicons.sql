-- Remote accounts' `pleroma.favicon` (issue 29): each instance's favicon is learned once from its home page by the
-- cron (services/instance-favicons.ts) and kept with the instance; accounts carry a copy so every read renders it.
-- Every remote domain gets its instance row (stored actors add theirs from now on).
ALTER TABLE `instances` ADD `favicon` text;
--> statement-breakpoint
ALTER TABLE `instances` ADD `favicon_fetched_at` integer;
--> statement-breakpoint
CREATE INDEX `instances_favicon_due` ON `instances` (`favicon_fetched_at`,`created_at`);
--> statement-breakpoint
ALTER TABLE `accounts` ADD `favicon` text;
--> statement-breakpoint
INSERT OR IGNORE INTO `instances` (`domain`, `failure_count`, `created_at`)
  SELECT DISTINCT `domain`, 0, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) FROM `accounts` WHERE `domain` IS NOT NULL;
