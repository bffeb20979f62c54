-- Secrets move out of `users` (read by every authenticated request) into their own table, read only by the
-- password check and signing. Written by hand; the lead reconciles migrations/meta.
CREATE TABLE `credentials` (
	`account_id` text PRIMARY KEY NOT NULL,
	`password_hash` text NOT NULL,
	`private_key` text,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `credentials` (`account_id`, `password_hash`, `private_key`) SELECT `account_id`, `password_hash`, `private_key` FROM `users`;
--> statement-breakpoint
ALTER TABLE `users` DROP COLUMN `password_hash`;
--> statement-breakpoint
ALTER TABLE `users` DROP COLUMN `private_key`;
