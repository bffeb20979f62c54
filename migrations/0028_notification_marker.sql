CREATE INDEX `notifications_unseen` ON `notifications` (`account_id`) WHERE is_seen = 0;--> statement-breakpoint
-- Written by hand (drizzle-kit does not make triggers): the marker is made once per user, on their first
-- notification. Before, every new notification computed the marker's default (the newest seen notification)
-- by walking all of the user's unread ones, before the insert was ignored.
DROP TRIGGER `notifications_marker`;
--> statement-breakpoint
CREATE TRIGGER `notifications_marker` AFTER INSERT ON `notifications`
WHEN NOT EXISTS (SELECT 1 FROM `markers` WHERE `account_id` = NEW.`account_id` AND `timeline` = 'notifications')
BEGIN
  INSERT OR IGNORE INTO `markers` (`account_id`, `timeline`, `last_read_id`, `version`, `updated_at`)
  VALUES (NEW.`account_id`, 'notifications',
    coalesce((SELECT max(`id`) FROM `notifications` WHERE `account_id` = NEW.`account_id` AND `is_seen` = 1), ''),
    0, NEW.`created_at`);
END;
