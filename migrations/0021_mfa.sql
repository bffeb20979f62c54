-- MFA, password resets and the mascot (src/services/mfa.ts, src/services/passwords.ts). Written by hand; the lead
-- reconciles meta.
ALTER TABLE `credentials` ADD `totp_secret` text;
--> statement-breakpoint
ALTER TABLE `credentials` ADD `totp_pending` text;
--> statement-breakpoint
ALTER TABLE `credentials` ADD `password_reset_pending` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `users` ADD `mascot` text;
--> statement-breakpoint
CREATE TABLE `mfa_backup_codes` (
	`code_hash` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `mfa_backup_codes_account` ON `mfa_backup_codes` (`account_id`);
--> statement-breakpoint
CREATE TABLE `mfa_tokens` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`app_id` text NOT NULL,
	`scopes` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `mfa_tokens_expires` ON `mfa_tokens` (`expires_at`);
--> statement-breakpoint
CREATE TABLE `password_reset_tokens` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `password_reset_tokens_expires` ON `password_reset_tokens` (`expires_at`);
