CREATE TABLE `stream_presence` (
	`object` text NOT NULL,
	`account_id` text NOT NULL,
	`token_id` text NOT NULL,
	`stream` text NOT NULL,
	`arg` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `stream_presence_key` ON `stream_presence` (`object`,`token_id`,`stream`,`arg`);--> statement-breakpoint
CREATE INDEX `stream_presence_stream` ON `stream_presence` (`stream`,`arg`);--> statement-breakpoint
CREATE INDEX `stream_presence_account` ON `stream_presence` (`account_id`,`stream`);