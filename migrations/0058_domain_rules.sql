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
