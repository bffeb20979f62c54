-- Issue 44: what each remote sender made this instance store today, for the inbound limits
-- (services/inbound-limits.ts). A sender is an actor id, or a host name (all of that host's actors together). One
-- row per UTC day and sender, with the current hour's figures beside the day's, so a check reads two rows (the
-- actor's and its host's) and a stored post writes the same two, upserted in the post's own batch. Keyed by day
-- first: the check is a primary-key look-up, the admin view reads one day's range, and the cron's hourly clean-up
-- deletes past days by range. WITHOUT ROWID: the key is the row, no second index to write.
CREATE TABLE `inbound_usage` (
  `day` integer NOT NULL,
  `sender` text NOT NULL,
  `statuses` integer DEFAULT 0 NOT NULL,
  `bytes` integer DEFAULT 0 NOT NULL,
  `stranger_statuses` integer DEFAULT 0 NOT NULL,
  `stranger_bytes` integer DEFAULT 0 NOT NULL,
  `mentions` integer DEFAULT 0 NOT NULL,
  `hour` integer DEFAULT 0 NOT NULL,
  `hour_statuses` integer DEFAULT 0 NOT NULL,
  `hour_bytes` integer DEFAULT 0 NOT NULL,
  `hour_stranger_statuses` integer DEFAULT 0 NOT NULL,
  `hour_stranger_bytes` integer DEFAULT 0 NOT NULL,
  `hour_mentions` integer DEFAULT 0 NOT NULL,
  `refused_hour` integer,
  `refused_hours` integer DEFAULT 0 NOT NULL,
  PRIMARY KEY (`day`, `sender`)
) WITHOUT ROWID;
