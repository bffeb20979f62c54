CREATE TABLE `filters` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`phrase` text NOT NULL,
	`context` text NOT NULL,
	`irreversible` integer DEFAULT false NOT NULL,
	`whole_word` integer DEFAULT true NOT NULL,
	`expires_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `filters_account` ON `filters` (`account_id`);--> statement-breakpoint
CREATE INDEX `filters_expires` ON `filters` (`expires_at`);--> statement-breakpoint
CREATE TABLE `list_accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`list_id` text NOT NULL,
	`account_id` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`list_id`) REFERENCES `lists`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `list_accounts_pair` ON `list_accounts` (`list_id`,`account_id`);--> statement-breakpoint
CREATE INDEX `list_accounts_account` ON `list_accounts` (`account_id`);--> statement-breakpoint
CREATE TABLE `lists` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`title` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `lists_account` ON `lists` (`account_id`,`id`);--> statement-breakpoint
CREATE TABLE `notifications` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`from_account_id` text NOT NULL,
	`type` text NOT NULL,
	`status_id` text,
	`report_id` text,
	`target_account_id` text,
	`emoji` text,
	`is_seen` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`from_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`report_id`) REFERENCES `reports`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `notifications_account` ON `notifications` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `notifications_from` ON `notifications` (`from_account_id`);--> statement-breakpoint
CREATE TABLE `reports` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`target_account_id` text NOT NULL,
	`status_ids` text DEFAULT '[]' NOT NULL,
	`comment` text DEFAULT '' NOT NULL,
	`forward` integer DEFAULT false NOT NULL,
	`state` text DEFAULT 'open' NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`target_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `reports_target` ON `reports` (`target_account_id`);