-- The browser sign-in page (issue 34) asks for the second factor as the authorize page does, but signs in no
-- app: an MFA token may now belong to no app (`app_id` NULL), and only that page redeems such a token. SQLite
-- cannot drop a NOT NULL, so the table is made again; pending tokens (five minutes' worth) are copied over.
CREATE TABLE `mfa_tokens_new` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`app_id` text,
	`scopes` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `mfa_tokens_new` SELECT `token_hash`, `account_id`, `app_id`, `scopes`, `attempts`, `created_at`, `expires_at` FROM `mfa_tokens`;
--> statement-breakpoint
DROP TABLE `mfa_tokens`;
--> statement-breakpoint
ALTER TABLE `mfa_tokens_new` RENAME TO `mfa_tokens`;
--> statement-breakpoint
CREATE INDEX `mfa_tokens_expires` ON `mfa_tokens` (`expires_at`);
