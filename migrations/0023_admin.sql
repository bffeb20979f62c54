-- The admin API (issue 17, first half). Written by hand; the lead reconciles meta.
-- Notes staff leave on a report (Pleroma's report_notes).
CREATE TABLE `report_notes` (
	`id` text PRIMARY KEY NOT NULL,
	`report_id` text NOT NULL REFERENCES `reports`(`id`) ON DELETE CASCADE,
	`account_id` text NOT NULL REFERENCES `accounts`(`id`) ON DELETE CASCADE,
	`content` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `report_notes_report` ON `report_notes` (`report_id`,`id`);
--> statement-breakpoint
-- Invites made through the admin API keep their token so admins can list and share it (Pleroma's invites list);
-- a revoked invite (`revoked`) admits nobody.
ALTER TABLE `invites` ADD `token` text;
--> statement-breakpoint
ALTER TABLE `invites` ADD `revoked` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
CREATE INDEX `reports_state` ON `reports` (`state`,`id`);
