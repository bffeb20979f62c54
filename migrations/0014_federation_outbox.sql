-- The transactional outbox (src/services/outbox.ts): a row per activity a local account sends, written in the
-- same batch as the action; `activity` describes it (JSON, built into ActivityStreams when expanded), `body` is
-- the built JSON-LD once its deliveries are written (`expanded_at`). Written by hand; the lead reconciles meta.
CREATE TABLE `federation_outbox` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`activity` text NOT NULL,
	`body` text,
	`created_at` integer NOT NULL,
	`expanded_at` integer
);
--> statement-breakpoint
CREATE INDEX `federation_outbox_pending` ON `federation_outbox` (`id`) WHERE `expanded_at` IS NULL;
--> statement-breakpoint
-- One row per (activity, inbox) still to deliver: drained per destination host by its delivery object.
CREATE TABLE `federation_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`outbox_id` text NOT NULL,
	`host` text NOT NULL,
	`inbox` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_at` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `federation_deliveries_inbox` ON `federation_deliveries` (`outbox_id`,`inbox`);
--> statement-breakpoint
CREATE INDEX `federation_deliveries_due` ON `federation_deliveries` (`host`,`next_at`);
--> statement-breakpoint
CREATE INDEX `federation_deliveries_next` ON `federation_deliveries` (`next_at`);
