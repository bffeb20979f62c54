-- Files (MEDIA keys) to delete from R2, written in the batch that deletes the rows pointing at them (a deleted
-- status's media): the effects door deletes them at once after the answer, and the cron's `file_deletions` job
-- deletes what is still here (the door cut short, R2 failing) and then the rows. A new, empty table.
CREATE TABLE `file_deletions` (
  `key` text PRIMARY KEY NOT NULL,
  `created_at` integer NOT NULL
) WITHOUT ROWID;
