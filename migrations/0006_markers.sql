CREATE TABLE `markers` (
	`account_id` text NOT NULL,
	`timeline` text NOT NULL,
	`last_read_id` text NOT NULL,
	`version` integer DEFAULT 0 NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `markers_pair` ON `markers` (`account_id`,`timeline`);