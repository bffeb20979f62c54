-- Private notes on other accounts (Mastodon's `POST /api/v1/accounts/:id/note`; `note` in the relationship):
-- one per (author, account), removed when emptied.
CREATE TABLE `account_notes` (
  `account_id` text NOT NULL REFERENCES `accounts`(`id`) ON DELETE CASCADE,
  `target_account_id` text NOT NULL REFERENCES `accounts`(`id`) ON DELETE CASCADE,
  `comment` text NOT NULL,
  `updated_at` integer NOT NULL,
  PRIMARY KEY (`account_id`, `target_account_id`)
);
--> statement-breakpoint
CREATE INDEX `account_notes_target` ON `account_notes` (`target_account_id`);
