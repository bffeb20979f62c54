ALTER TABLE `statuses` ADD `home_pull` integer DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX `statuses_home_pull` ON `statuses` (`account_id`,`id`) WHERE home_pull = 1;