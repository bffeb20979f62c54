-- Issue 42: a notification group's count kept by the notifications' own triggers (one row written per groupable
-- notification), instead of counted by every grouped page from the group index (a row read per notification of
-- the group: 100 for a post with 100 favourites, each time the page is read). `shown` counts the group's
-- notifications not filtered, `filtered` those the recipient's policy set aside.
CREATE TABLE `notification_group_counts` (
  `account_id` text NOT NULL REFERENCES `accounts`(`id`) ON DELETE cascade,
  `group_key` text NOT NULL,
  `shown` integer DEFAULT 0 NOT NULL,
  `filtered` integer DEFAULT 0 NOT NULL,
  PRIMARY KEY (`account_id`, `group_key`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TRIGGER `notification_groups_counted` AFTER INSERT ON `notifications` WHEN NEW.`group_key` IS NOT NULL
BEGIN
  INSERT INTO `notification_group_counts` (`account_id`, `group_key`, `shown`, `filtered`)
  VALUES (NEW.`account_id`, NEW.`group_key`, NEW.`filtered` = 0, NEW.`filtered` <> 0)
  ON CONFLICT (`account_id`, `group_key`) DO UPDATE SET
    `shown` = `shown` + excluded.`shown`, `filtered` = `filtered` + excluded.`filtered`;
END;
--> statement-breakpoint
-- A group whose last notification goes leaves no row behind.
CREATE TRIGGER `notification_groups_uncounted` AFTER DELETE ON `notifications` WHEN OLD.`group_key` IS NOT NULL
BEGIN
  UPDATE `notification_group_counts` SET `shown` = `shown` - (OLD.`filtered` = 0), `filtered` = `filtered` - (OLD.`filtered` <> 0)
  WHERE `account_id` = OLD.`account_id` AND `group_key` = OLD.`group_key`;
  DELETE FROM `notification_group_counts` WHERE `account_id` = OLD.`account_id` AND `group_key` = OLD.`group_key`
    AND `shown` <= 0 AND `filtered` <= 0;
END;
--> statement-breakpoint
-- An accepted request unfilters its sender's notifications (and anything changing what a row is grouped by moves it).
CREATE TRIGGER `notification_groups_recounted` AFTER UPDATE OF `filtered`, `type`, `status_id`, `created_at`, `account_id` ON `notifications`
WHEN OLD.`filtered` IS NOT NEW.`filtered` OR OLD.`group_key` IS NOT NEW.`group_key` OR OLD.`account_id` IS NOT NEW.`account_id`
BEGIN
  UPDATE `notification_group_counts` SET `shown` = `shown` - (OLD.`filtered` = 0), `filtered` = `filtered` - (OLD.`filtered` <> 0)
  WHERE OLD.`group_key` IS NOT NULL AND `account_id` = OLD.`account_id` AND `group_key` = OLD.`group_key`;
  DELETE FROM `notification_group_counts` WHERE OLD.`group_key` IS NOT NULL AND `account_id` = OLD.`account_id`
    AND `group_key` = OLD.`group_key` AND `shown` <= 0 AND `filtered` <= 0;
  INSERT INTO `notification_group_counts` (`account_id`, `group_key`, `shown`, `filtered`)
  SELECT NEW.`account_id`, NEW.`group_key`, NEW.`filtered` = 0, NEW.`filtered` <> 0 WHERE NEW.`group_key` IS NOT NULL
  ON CONFLICT (`account_id`, `group_key`) DO UPDATE SET
    `shown` = `shown` + excluded.`shown`, `filtered` = `filtered` + excluded.`filtered`;
END;
--> statement-breakpoint
-- Counted once from the rows: one read per grouped notification (through the group index) and one row written per
-- group, once.
INSERT INTO `notification_group_counts` (`account_id`, `group_key`, `shown`, `filtered`)
SELECT `account_id`, `group_key`, sum(`filtered` = 0), sum(`filtered` <> 0) FROM `notifications` INDEXED BY `notifications_group`
WHERE `group_key` IS NOT NULL GROUP BY `account_id`, `group_key`;
