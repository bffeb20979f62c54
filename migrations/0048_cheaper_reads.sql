-- Issue 42: what a read costs in D1 rows. Every status shown is checked for a deactivated author; on the primary
-- key that look-up finds the (active) account, a row read per status. This index holds only deactivated
-- accounts, so the check finds nothing, and reads nothing, for an active one (and writes nothing for them).
CREATE INDEX `accounts_deactivated` ON `accounts` (`id`) WHERE deactivated = 1;
