-- Issue 42: a local account's follower and following figures kept by the follow rows' own triggers, one row
-- written each, instead of recounted by every follow, unfollow, block and accept (a count reads every follow row of
-- the account: 5,000 rows for an account with 5,000 followers, each time). A remote account's figures stay as its
-- server reports them (local rows know only a part of its followers).
CREATE TRIGGER `follows_counted` AFTER INSERT ON `follows` BEGIN
  UPDATE `accounts` SET `followers_count` = `followers_count` + 1 WHERE `id` = NEW.`target_account_id` AND `domain` IS NULL;
  UPDATE `accounts` SET `following_count` = `following_count` + 1 WHERE `id` = NEW.`account_id` AND `domain` IS NULL;
END;--> statement-breakpoint
CREATE TRIGGER `follows_uncounted` AFTER DELETE ON `follows` BEGIN
  UPDATE `accounts` SET `followers_count` = `followers_count` - 1 WHERE `id` = OLD.`target_account_id` AND `domain` IS NULL;
  UPDATE `accounts` SET `following_count` = `following_count` - 1 WHERE `id` = OLD.`account_id` AND `domain` IS NULL;
END;--> statement-breakpoint
-- From now on exact: counted once from the rows.
UPDATE `accounts` SET
  `followers_count` = (SELECT count(*) FROM `follows` WHERE `target_account_id` = `accounts`.`id`),
  `following_count` = (SELECT count(*) FROM `follows` WHERE `account_id` = `accounts`.`id`)
WHERE `domain` IS NULL;
