ALTER TABLE `statuses` ADD `fanout_pending` integer DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX `statuses_fanout_pending` ON `statuses` (`account_id`,`id`) WHERE fanout_pending = 1;