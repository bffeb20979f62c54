-- Shared blocklists (issue 48; services/domain-rules.ts). `federation_policies.source`: where a rule came from
-- (`hand`, `import`, `subscription:<id>`), so imports and subscriptions leave rules written by hand alone.
-- `domain_rule_notes`: what a Mastodon domain block has beside its policies (the private comment, obfuscation).
-- `domain_subscriptions`: blocklists (or allow-lists) fetched daily by the cron.
ALTER TABLE `federation_policies` ADD COLUMN `source` text DEFAULT 'hand' NOT NULL;
--> statement-breakpoint
CREATE TABLE `domain_rule_notes` (
	`domain` text PRIMARY KEY NOT NULL,
	`private_comment` text DEFAULT '' NOT NULL,
	`obfuscate` integer DEFAULT 0 NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `domain_subscriptions` (
	`id` text PRIMARY KEY NOT NULL,
	`title` text DEFAULT '' NOT NULL,
	`uri` text NOT NULL,
	`content_type` text NOT NULL,
	`permission_type` text NOT NULL,
	`priority` integer DEFAULT 0 NOT NULL,
	`as_draft` integer DEFAULT 1 NOT NULL,
	`remove_retracted` integer DEFAULT 1 NOT NULL,
	`created_by` text NOT NULL,
	`created_at` integer NOT NULL,
	`etag` text,
	`last_modified` text,
	`fetched_at` integer,
	`successfully_fetched_at` integer,
	`next_fetch_at` integer NOT NULL,
	`count` integer DEFAULT 0 NOT NULL,
	`error` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `domain_subscriptions_uri` ON `domain_subscriptions` (`uri`);
--> statement-breakpoint
CREATE INDEX `domain_subscriptions_due` ON `domain_subscriptions` (`next_fetch_at`);
