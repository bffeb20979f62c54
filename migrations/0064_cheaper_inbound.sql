-- Issue 42: rows written for each stored remote post. `statuses_url` held every status's web address, for a pasted
-- address found without asking its server; a remote post paid an index row for it (5,300 rows a day for ten users
-- sharing a relay). It now holds local statuses only: a remote post's address is fetched (as an address of a post
-- not stored is) and found by its id, `statuses_uri`, which every status keeps (Mastodon's own index on url leaves
-- out the statuses whose url is their id). An anonymous search, which fetches nothing, finds a remote post by its id
-- only.
-- What it costs an existing instance: dropping the old index writes no row; the new one reads the statuses table
-- once (a row read per status: 100,000 statuses are 2% of a Free day's reads) and writes one row per local status,
-- once.
DROP INDEX `statuses_url`;--> statement-breakpoint
CREATE INDEX `statuses_url_local` ON `statuses` (`url`) WHERE local = 1;
