-- Grouped notifications, notification requests and the mention shield (issue 45).
-- `filtered`: a notification the recipient's policy or the mention shield set aside (Mastodon 4.3's column). It is
-- written as already pushed, so neither Web Push nor the streams take it; lists leave it out unless asked.
ALTER TABLE `notifications` ADD `filtered` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
-- `group_key`: what a notification is grouped by, computed from the row (a virtual column costs no write): the
-- same type about the same status (or a follow) within the same 12-hour slot. Other types have none and are
-- answered as `ungrouped-<id>`, as Mastodon does.
ALTER TABLE `notifications` ADD `group_key` text GENERATED ALWAYS AS (CASE
  WHEN `type` IN ('favourite', 'reblog', 'pleroma:emoji_reaction') AND `status_id` IS NOT NULL
    THEN `type` || '-' || `status_id` || '-' || (`created_at` / 43200000)
  WHEN `type` = 'follow' THEN 'follow-' || (`created_at` / 43200000) END) VIRTUAL;
--> statement-breakpoint
-- A group's count and sample accounts are read by its key: one index entry more per groupable notification (the
-- others have no key and no entry).
CREATE INDEX `notifications_group` ON `notifications` (`account_id`, `group_key`, `filtered`, `id`) WHERE `group_key` IS NOT NULL;
--> statement-breakpoint
CREATE TABLE `notification_requests` (
  `id` text PRIMARY KEY NOT NULL,
  `account_id` text NOT NULL REFERENCES `accounts`(`id`) ON DELETE cascade,
  `from_account_id` text NOT NULL REFERENCES `accounts`(`id`) ON DELETE cascade,
  `last_status_id` text,
  `notifications_count` integer DEFAULT 0 NOT NULL,
  `created_at` integer NOT NULL,
  `updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `notification_requests_pair` ON `notification_requests` (`account_id`, `from_account_id`);
--> statement-breakpoint
CREATE INDEX `notification_requests_from` ON `notification_requests` (`from_account_id`);
--> statement-breakpoint
-- Senders whose notifications the recipient accepted (an accepted request): never filtered again.
CREATE TABLE `notification_permissions` (
  `account_id` text NOT NULL REFERENCES `accounts`(`id`) ON DELETE cascade,
  `from_account_id` text NOT NULL REFERENCES `accounts`(`id`) ON DELETE cascade,
  `created_at` integer NOT NULL,
  PRIMARY KEY (`account_id`, `from_account_id`)
) WITHOUT ROWID;
--> statement-breakpoint
-- Every filtered notification is counted in its sender's request, whatever statement created it.
CREATE TRIGGER `notification_requests_filtered` AFTER INSERT ON `notifications` WHEN NEW.`filtered` = 1
BEGIN
  INSERT INTO `notification_requests` (`id`, `account_id`, `from_account_id`, `last_status_id`, `notifications_count`, `created_at`, `updated_at`)
  VALUES (NEW.`id`, NEW.`account_id`, NEW.`from_account_id`, NEW.`status_id`, 1, NEW.`created_at`, NEW.`created_at`)
  ON CONFLICT (`account_id`, `from_account_id`) DO UPDATE SET
    `notifications_count` = `notifications_count` + 1,
    `last_status_id` = coalesce(excluded.`last_status_id`, `last_status_id`),
    `updated_at` = excluded.`updated_at`;
END;
--> statement-breakpoint
-- Mastodon 4.3's notification policy of a user, as JSON; NULL means the defaults (everything accepted).
ALTER TABLE `users` ADD `notification_policy` text;
