-- Run-time instance settings, federation policies, registration approval and announcements (issue 17, second
-- half). Written by hand; the lead reconciles meta.
CREATE TABLE `instance_settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `federation_policies` (
	`domain` text NOT NULL,
	`policy` text NOT NULL,
	`reason` text DEFAULT '' NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`domain`, `policy`)
);
--> statement-breakpoint
CREATE INDEX `federation_policies_policy` ON `federation_policies` (`policy`,`domain`);
--> statement-breakpoint
ALTER TABLE `users` ADD `approval_pending` integer DEFAULT false NOT NULL;
--> statement-breakpoint
ALTER TABLE `users` ADD `registration_reason` text;
--> statement-breakpoint
CREATE TABLE `announcements` (
	`id` text PRIMARY KEY NOT NULL,
	`content` text NOT NULL,
	`starts_at` integer,
	`ends_at` integer,
	`all_day` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `announcement_reads` (
	`announcement_id` text NOT NULL REFERENCES `announcements`(`id`) ON DELETE cascade,
	`account_id` text NOT NULL REFERENCES `accounts`(`id`) ON DELETE cascade,
	PRIMARY KEY(`announcement_id`, `account_id`)
);
