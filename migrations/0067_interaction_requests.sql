-- GoToSocial's interaction controls, the asking side (issue 49). A remote post's `interactionPolicy` for replies,
-- likes and boosts, compact (federation/documents/remote-interaction-policy.ts); NULL, as for nearly every post,
-- when it lets everyone do all three. Adding nullable columns rewrites no row, and they have no index.
ALTER TABLE `statuses` ADD COLUMN `interaction_policy` text;
--> statement-breakpoint
-- A local reply or boost of such a post: 'pending' (asked, not answered), 'approved', 'rejected', 'denied' (the
-- policy lets nobody: sent without approval). NULL for everything else.
ALTER TABLE `statuses` ADD COLUMN `approval` text;
--> statement-breakpoint
-- What a local user asked a remote author to approve (a ReplyRequest, LikeRequest or AnnounceRequest), and the
-- answer: one row per interaction that needed asking, none for the others.
CREATE TABLE `interaction_requests` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`account_id` text NOT NULL,
	`status_id` text NOT NULL,
	`target_account_id` text NOT NULL,
	`interaction_id` text NOT NULL,
	`interaction_uri` text NOT NULL,
	`request_uri` text NOT NULL,
	`state` text NOT NULL,
	`authorization_uri` text,
	`accept_uri` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `interaction_requests_request` ON `interaction_requests` (`request_uri`);
--> statement-breakpoint
CREATE UNIQUE INDEX `interaction_requests_interaction` ON `interaction_requests` (`interaction_id`);
--> statement-breakpoint
CREATE INDEX `interaction_requests_status` ON `interaction_requests` (`status_id`);
