-- Relays this instance follows (issue 36): LitePub relays (the instance actor follows the relay's actor) and
-- Mastodon-style ones (a Follow of the public collection sent to the relay's inbox). `kind` is NULL until the URL
-- an admin gave (`url`, the admin API's key) has been looked up (the command line adds rows the cron resolves).
CREATE TABLE `relays` (
	`id` text PRIMARY KEY NOT NULL,
	`url` text NOT NULL,
	`kind` text,
	`actor_uri` text,
	`inbox_url` text,
	`follow_uri` text,
	`state` text DEFAULT 'pending' NOT NULL,
	`followed_back` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `relays_url` ON `relays` (`url`);
--> statement-breakpoint
CREATE UNIQUE INDEX `relays_follow_uri` ON `relays` (`follow_uri`);
--> statement-breakpoint
-- Delivery reads the accepted relays for every public status (services/audience.ts): by index, not a scan.
CREATE INDEX `relays_state` ON `relays` (`state`);
