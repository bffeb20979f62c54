-- Background work: a heartbeat per cron job, retry counts for scheduled posts, presence rows refreshed on every sync.
CREATE TABLE `job_heartbeats` (
	`name` text PRIMARY KEY NOT NULL,
	`last_run_at` integer NOT NULL,
	`last_success_at` integer,
	`last_error` text,
	`last_error_at` integer
);
--> statement-breakpoint
ALTER TABLE `scheduled_statuses` ADD `attempts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `scheduled_statuses` ADD `last_error` text;--> statement-breakpoint
ALTER TABLE `stream_presence` ADD `seen_at` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `stream_presence_seen` ON `stream_presence` (`seen_at`);--> statement-breakpoint
CREATE INDEX `media_unattached` ON `media_attachments` (`created_at`) WHERE `status_id` IS NULL AND `scheduled_status_id` IS NULL;--> statement-breakpoint
CREATE INDEX `mail_outbox_created` ON `mail_outbox` (`created_at`);--> statement-breakpoint
CREATE INDEX `authorization_codes_expires` ON `authorization_codes` (`expires_at`);
--> statement-breakpoint
-- An invite is never used more than it allows: the registration batch's `uses + 1` aborts (and the whole batch
-- with it) when racing registrations would pass `max_uses`.
CREATE TRIGGER `invites_max_uses` BEFORE UPDATE OF `uses` ON `invites`
WHEN NEW.`max_uses` IS NOT NULL AND NEW.`uses` > NEW.`max_uses`
BEGIN SELECT RAISE(ABORT, 'invite_exhausted'); END;
