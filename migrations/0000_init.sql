CREATE TABLE `accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`username` text NOT NULL,
	`domain` text,
	`display_name` text DEFAULT '' NOT NULL,
	`note` text DEFAULT '' NOT NULL,
	`avatar` text,
	`header` text,
	`background` text,
	`locked` integer DEFAULT false NOT NULL,
	`actor_type` text DEFAULT 'Person' NOT NULL,
	`discoverable` integer DEFAULT false NOT NULL,
	`fields` text DEFAULT '[]' NOT NULL,
	`emojis` text DEFAULT '[]' NOT NULL,
	`also_known_as` text DEFAULT '[]' NOT NULL,
	`tags` text DEFAULT '[]' NOT NULL,
	`uri` text NOT NULL,
	`url` text NOT NULL,
	`inbox_url` text,
	`shared_inbox_url` text,
	`outbox_url` text,
	`followers_url` text,
	`public_key` text,
	`followers_count` integer DEFAULT 0 NOT NULL,
	`following_count` integer DEFAULT 0 NOT NULL,
	`statuses_count` integer DEFAULT 0 NOT NULL,
	`last_status_at` integer,
	`moved_to_account_id` text,
	`hide_followers` integer DEFAULT false NOT NULL,
	`hide_follows` integer DEFAULT false NOT NULL,
	`hide_followers_count` integer DEFAULT false NOT NULL,
	`hide_follows_count` integer DEFAULT false NOT NULL,
	`hide_favorites` integer DEFAULT true NOT NULL,
	`accepts_chat_messages` integer,
	`deactivated` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`acct_key` text GENERATED ALWAYS AS (lower(username) || CASE WHEN domain IS NULL THEN '' ELSE '@' || lower(domain) END) VIRTUAL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `accounts_acct_key` ON `accounts` (`acct_key`);--> statement-breakpoint
CREATE UNIQUE INDEX `accounts_uri` ON `accounts` (`uri`);--> statement-breakpoint
CREATE INDEX `accounts_domain` ON `accounts` (`domain`);--> statement-breakpoint
CREATE TABLE `apps` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`website` text,
	`redirect_uris` text NOT NULL,
	`scopes` text NOT NULL,
	`client_id` text NOT NULL,
	`client_secret_hash` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `apps_client_id` ON `apps` (`client_id`);--> statement-breakpoint
CREATE TABLE `authorization_codes` (
	`id` text PRIMARY KEY NOT NULL,
	`code_hash` text NOT NULL,
	`app_id` text NOT NULL,
	`account_id` text NOT NULL,
	`scopes` text NOT NULL,
	`redirect_uri` text NOT NULL,
	`code_challenge` text,
	`code_challenge_method` text,
	`used_at` integer,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `authorization_codes_code_hash` ON `authorization_codes` (`code_hash`);--> statement-breakpoint
CREATE TABLE `blocks` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`target_account_id` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`target_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `blocks_pair` ON `blocks` (`account_id`,`target_account_id`);--> statement-breakpoint
CREATE INDEX `blocks_target` ON `blocks` (`target_account_id`,`id`);--> statement-breakpoint
CREATE INDEX `blocks_account` ON `blocks` (`account_id`,`id`);--> statement-breakpoint
CREATE TABLE `domain_blocks` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`domain` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `domain_blocks_pair` ON `domain_blocks` (`account_id`,`domain`);--> statement-breakpoint
CREATE TABLE `endorsements` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`target_account_id` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`target_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `endorsements_pair` ON `endorsements` (`account_id`,`target_account_id`);--> statement-breakpoint
CREATE INDEX `endorsements_target` ON `endorsements` (`target_account_id`,`id`);--> statement-breakpoint
CREATE INDEX `endorsements_account` ON `endorsements` (`account_id`,`id`);--> statement-breakpoint
CREATE TABLE `follow_requests` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`target_account_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`show_reblogs` integer DEFAULT true NOT NULL,
	`notify` integer DEFAULT false NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`target_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `follow_requests_pair` ON `follow_requests` (`account_id`,`target_account_id`);--> statement-breakpoint
CREATE INDEX `follow_requests_target` ON `follow_requests` (`target_account_id`,`id`);--> statement-breakpoint
CREATE INDEX `follow_requests_account` ON `follow_requests` (`account_id`,`id`);--> statement-breakpoint
CREATE TABLE `follows` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`target_account_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`show_reblogs` integer DEFAULT true NOT NULL,
	`notify` integer DEFAULT false NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`target_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `follows_pair` ON `follows` (`account_id`,`target_account_id`);--> statement-breakpoint
CREATE INDEX `follows_target` ON `follows` (`target_account_id`,`id`);--> statement-breakpoint
CREATE INDEX `follows_account` ON `follows` (`account_id`,`id`);--> statement-breakpoint
CREATE TABLE `instance_keys` (
	`name` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `invites` (
	`id` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`max_uses` integer,
	`uses` integer DEFAULT 0 NOT NULL,
	`expires_at` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `invites_token_hash` ON `invites` (`token_hash`);--> statement-breakpoint
CREATE TABLE `mail_outbox` (
	`id` text PRIMARY KEY NOT NULL,
	`to` text NOT NULL,
	`from` text NOT NULL,
	`subject` text NOT NULL,
	`text` text NOT NULL,
	`html` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `mutes` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`target_account_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`hide_notifications` integer DEFAULT true NOT NULL,
	`expires_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`target_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `mutes_pair` ON `mutes` (`account_id`,`target_account_id`);--> statement-breakpoint
CREATE INDEX `mutes_target` ON `mutes` (`target_account_id`,`id`);--> statement-breakpoint
CREATE INDEX `mutes_account` ON `mutes` (`account_id`,`id`);--> statement-breakpoint
CREATE TABLE `rate_limits` (
	`key` text PRIMARY KEY NOT NULL,
	`window_start` integer NOT NULL,
	`count` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `subscriptions` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`target_account_id` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`target_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `subscriptions_pair` ON `subscriptions` (`account_id`,`target_account_id`);--> statement-breakpoint
CREATE INDEX `subscriptions_target` ON `subscriptions` (`target_account_id`,`id`);--> statement-breakpoint
CREATE INDEX `subscriptions_account` ON `subscriptions` (`account_id`,`id`);--> statement-breakpoint
CREATE TABLE `tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`refresh_hash` text,
	`app_id` text,
	`account_id` text,
	`scopes` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tokens_token_hash` ON `tokens` (`token_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `tokens_refresh_hash` ON `tokens` (`refresh_hash`);--> statement-breakpoint
CREATE INDEX `tokens_account` ON `tokens` (`account_id`);--> statement-breakpoint
CREATE TABLE `used_captchas` (
	`token` text PRIMARY KEY NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `users` (
	`account_id` text PRIMARY KEY NOT NULL,
	`email` text NOT NULL,
	`password_hash` text NOT NULL,
	`confirmed` integer DEFAULT true NOT NULL,
	`confirmation_token_hash` text,
	`confirmation_sent_at` integer,
	`locale` text DEFAULT 'en' NOT NULL,
	`default_scope` text DEFAULT 'public' NOT NULL,
	`sensitive` integer DEFAULT false NOT NULL,
	`posting_language` text,
	`note_source` text DEFAULT '' NOT NULL,
	`fields_source` text DEFAULT '[]' NOT NULL,
	`no_rich_text` integer DEFAULT false NOT NULL,
	`show_role` integer DEFAULT true NOT NULL,
	`skip_thread_containment` integer DEFAULT false NOT NULL,
	`allow_following_move` integer DEFAULT true NOT NULL,
	`is_admin` integer DEFAULT false NOT NULL,
	`is_moderator` integer DEFAULT false NOT NULL,
	`settings_store` text DEFAULT '{}' NOT NULL,
	`notification_settings` text DEFAULT '{"block_from_strangers":false,"hide_notification_contents":false}' NOT NULL,
	`private_key` text,
	`invite_id` text,
	`last_active_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email` ON `users` (lower("email"));--> statement-breakpoint
CREATE INDEX `users_last_active` ON `users` (`last_active_at`);