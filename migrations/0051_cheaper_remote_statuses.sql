-- Issue 42: what a stored remote status costs in D1 rows (each index holding it is a row written). The local
-- timeline walked `statuses_public_local_tl`, on (local, id) over every public status: remote ones paid an index
-- row for a timeline that never shows them. This index holds the local public statuses only; the remote-only
-- timeline walks `statuses_public_tl` (skipping the local statuses among them).
-- What it costs an existing instance: one row written per local public status (the new index's entries), once;
-- dropping the old index writes none.
DROP INDEX `statuses_public_local_tl`;--> statement-breakpoint
CREATE INDEX `statuses_local_tl` ON `statuses` (`id`) WHERE local = 1 AND reblog_of_id IS NULL AND visibility IN ('public', 'local');
