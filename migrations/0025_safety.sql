-- Reports received from other servers (Flag): the Flag's id, so that one delivered again writes nothing.
ALTER TABLE `reports` ADD `uri` text;--> statement-breakpoint
CREATE UNIQUE INDEX `reports_uri` ON `reports` (`uri`,`target_account_id`) WHERE uri IS NOT NULL;
