-- When a remote status was stored here (issue 35): its id and created_at are its publication, which may be long
-- before (a boost of an old post, a post fetched by a search), and the retention counts from this instead.
ALTER TABLE `statuses` ADD `stored_at` integer;
