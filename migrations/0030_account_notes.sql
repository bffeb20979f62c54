-- Private notes on other accounts (Mastodon's `POST /api/v1/accounts/:id/note`; `note` in the relationship):
-- one per (author, account), removed when emptied. The shape of every account-pair table (`pairTable`).
CREATE TABLE `account_notes` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`target_account_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`comment` text NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`target_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `account_notes_pair` ON `account_notes` (`account_id`,`target_account_id`);--> statement-breakpoint
CREATE INDEX `account_notes_target` ON `account_notes` (`target_account_id`,`id`);--> statement-breakpoint
CREATE INDEX `account_notes_account` ON `account_notes` (`account_id`,`id`);
