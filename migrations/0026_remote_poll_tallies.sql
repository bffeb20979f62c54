-- Remote polls show their server's tallies (issue 18, polls lane): the counts per option (`replies.totalItems`)
-- and `votersCount` of the Question as last received (Create, then each Update), plus this instance's own votes
-- counted in until the next Update. NULL for local polls (counted from poll_votes). Written by hand; the lead
-- reconciles meta.
ALTER TABLE `polls` ADD `remote_tallies` text;
--> statement-breakpoint
ALTER TABLE `polls` ADD `remote_voters` integer;
