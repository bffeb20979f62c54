CREATE TABLE `push_subscriptions` (
	`id` text PRIMARY KEY NOT NULL,
	`token_id` text NOT NULL,
	`account_id` text NOT NULL,
	`endpoint` text NOT NULL,
	`p256dh` text NOT NULL,
	`auth` text NOT NULL,
	`alerts` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`token_id`) REFERENCES `tokens`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `push_subscriptions_token` ON `push_subscriptions` (`token_id`);--> statement-breakpoint
CREATE INDEX `push_subscriptions_account` ON `push_subscriptions` (`account_id`);--> statement-breakpoint
ALTER TABLE `notifications` ADD `pushed` integer DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX `notifications_unpushed` ON `notifications` (`id`) WHERE pushed = 0;