-- Quote posts (issue 46; services/quotes.ts). Columns added without rewriting any table.
-- `users.quote_policy`: who may quote the user's new posts by default (`public`, `followers`, `nobody`).
-- `statuses.quote_policy`: a post's own policy (a remote post's as its `interactionPolicy.canQuote` says; NULL:
-- unknown); `statuses.quotes_count`: accepted quotes of it known here, recounted from `quotes`.
-- `quotes`: one row per quoting status, with its state (pending, accepted, rejected, revoked), the quoted post
-- (by uri, and by id once stored here), the stamp (`QuoteAuthorization`) that approved it and the request's id.
ALTER TABLE `users` ADD COLUMN `quote_policy` text DEFAULT 'public' NOT NULL;
--> statement-breakpoint
ALTER TABLE `statuses` ADD COLUMN `quote_policy` text;
--> statement-breakpoint
ALTER TABLE `statuses` ADD COLUMN `quotes_count` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
CREATE TABLE `quotes` (
	`id` text PRIMARY KEY NOT NULL,
	`status_id` text NOT NULL,
	`account_id` text NOT NULL,
	`quoted_status_id` text,
	`quoted_account_id` text,
	`quoted_uri` text NOT NULL,
	`state` text NOT NULL,
	`authorization_uri` text,
	`request_uri` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `quotes_status` ON `quotes` (`status_id`);
--> statement-breakpoint
CREATE INDEX `quotes_quoted` ON `quotes` (`quoted_status_id`,`id`) WHERE quoted_status_id IS NOT NULL;
--> statement-breakpoint
CREATE INDEX `quotes_quoted_uri` ON `quotes` (`quoted_uri`);
--> statement-breakpoint
CREATE UNIQUE INDEX `quotes_authorization` ON `quotes` (`authorization_uri`) WHERE authorization_uri IS NOT NULL;
--> statement-breakpoint
CREATE UNIQUE INDEX `quotes_request` ON `quotes` (`request_uri`) WHERE request_uri IS NOT NULL;
