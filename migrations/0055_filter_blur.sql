-- Issue 45: Mastodon 4.4's `filter_action: "blur"` (media blurred, the post shown), kept beside `irreversible`
-- (`hide`). Adding a column with a constant default rewrites no row.
ALTER TABLE `filters` ADD `blur` integer DEFAULT 0 NOT NULL;
