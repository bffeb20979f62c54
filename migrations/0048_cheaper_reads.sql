-- Issue 42: what a read costs in D1 rows. Every status shown is checked for a deactivated author; on the primary
-- key that look-up finds the (active) account, a row read per status. This index holds only deactivated
-- accounts, so the check finds nothing, and reads nothing, for an active one (and writes nothing for them).
CREATE INDEX `accounts_deactivated` ON `accounts` (`id`) WHERE deactivated = 1;
--> statement-breakpoint
-- How many other servers this instance knows (distinct domains of remote accounts), kept by the triggers below
-- so the figure costs one row to read (the instance document, nodeinfo, the front page) instead of a walk of
-- every remote account. A trigger reads the account's domain on its index (a row or two) and writes only when
-- the first account of a domain comes or the last goes.
CREATE TABLE `instance_counts` (
	`id` integer PRIMARY KEY NOT NULL CHECK (`id` = 1),
	`domains` integer NOT NULL
);--> statement-breakpoint
INSERT INTO `instance_counts` (`id`, `domains`) SELECT 1, count(DISTINCT `domain`) FROM `accounts` WHERE `domain` IS NOT NULL;--> statement-breakpoint
CREATE TRIGGER `accounts_domains_insert` AFTER INSERT ON `accounts`
WHEN NEW.domain IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `accounts` o WHERE o.domain = NEW.domain AND o.rowid <> NEW.rowid)
BEGIN
  UPDATE `instance_counts` SET `domains` = `domains` + 1 WHERE `id` = 1;
END;--> statement-breakpoint
CREATE TRIGGER `accounts_domains_delete` AFTER DELETE ON `accounts`
WHEN OLD.domain IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `accounts` o WHERE o.domain = OLD.domain)
BEGIN
  UPDATE `instance_counts` SET `domains` = `domains` - 1 WHERE `id` = 1;
END;--> statement-breakpoint
CREATE TRIGGER `accounts_domains_update` AFTER UPDATE OF `domain` ON `accounts`
WHEN OLD.domain IS NOT NEW.domain
BEGIN
  UPDATE `instance_counts` SET `domains` = `domains`
    + (NEW.domain IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `accounts` o WHERE o.domain = NEW.domain AND o.rowid <> NEW.rowid))
    - (OLD.domain IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `accounts` o WHERE o.domain = OLD.domain))
  WHERE `id` = 1;
END;
