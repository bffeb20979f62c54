-- The notifications marker exists as soon as the user has a notification: Pleroma writes it with every
-- notification. A trigger, so every statement that creates notifications (one row or many) keeps the rule.
-- An existing marker is left as its owner set it; a new one starts at the newest notification already seen.
CREATE TRIGGER `notifications_marker` AFTER INSERT ON `notifications`
BEGIN
  INSERT OR IGNORE INTO `markers` (`account_id`, `timeline`, `last_read_id`, `version`, `updated_at`)
  VALUES (NEW.`account_id`, 'notifications',
    coalesce((SELECT max(`id`) FROM `notifications` WHERE `account_id` = NEW.`account_id` AND `is_seen` = 1), ''),
    0, NEW.`created_at`);
END;
--> statement-breakpoint
INSERT OR IGNORE INTO `markers` (`account_id`, `timeline`, `last_read_id`, `version`, `updated_at`)
SELECT n.`account_id`, 'notifications', coalesce(max(CASE WHEN n.`is_seen` = 1 THEN n.`id` END), ''), 0, max(n.`created_at`)
FROM `notifications` n GROUP BY n.`account_id`;
