-- Issue 43: mail is durable. An action that mails someone writes the message here in its own batch; the effects
-- door sends it after the answer and the cron sends what is still due (a failed send waits `next_at`, pushed back
-- each attempt, and is given up after a bounded number). A new, empty table: nothing is rewritten.
CREATE TABLE `mail_queue` (
	`id` text PRIMARY KEY NOT NULL,
	`from` text NOT NULL,
	`to` text NOT NULL,
	`subject` text NOT NULL,
	`text` text NOT NULL,
	`html` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_at` integer NOT NULL,
	`last_error` text,
	`created_at` integer NOT NULL
);--> statement-breakpoint
CREATE INDEX `mail_queue_due` ON `mail_queue` (`next_at`);
