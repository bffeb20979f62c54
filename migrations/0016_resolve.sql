-- Resolving by URL (src/services/resolve.ts, search with resolve=true): an account or a status is found by its
-- ActivityPub id (already unique-indexed) or its profile/page URL, which these index. Written by hand; the lead
-- reconciles meta.
CREATE INDEX `accounts_url` ON `accounts` (`url`);
--> statement-breakpoint
CREATE INDEX `statuses_url` ON `statuses` (`url`);
