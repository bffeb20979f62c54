-- Relays the cron could not look up (issue 36 review): how many times it tried, so that a failing row is retried
-- less and less often and, after a few tries, marked `failed` instead of being tried on every run.
ALTER TABLE `relays` ADD `attempts` integer DEFAULT 0 NOT NULL;
