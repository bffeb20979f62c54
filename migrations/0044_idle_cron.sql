-- An idle cron minute reads (almost) nothing (issue 42): what a job looks for when there is nothing to do is found
-- through an index that is empty, or nearly, then.

-- Moves whose local followers are still to be moved (services/move.ts). Written in the move's batch; the followers
-- are moved at once, after the answer (the effects door), and the row goes; what failed or was left over is
-- retried by the cron, found through `pending_moves_due` (empty when nothing failed).
CREATE TABLE `pending_moves` (
	`origin_id` text PRIMARY KEY NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`origin_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `pending_moves_due` ON `pending_moves` (`next_at`);
--> statement-breakpoint
-- The jobs whose last run failed: a heartbeat row is written when a job fails, reports, or recovers (read here),
-- not every minute (src/services/heartbeats.ts).
CREATE INDEX `job_heartbeats_failing` ON `job_heartbeats` (`name`) WHERE last_success_at IS NOT last_run_at;
--> statement-breakpoint
-- Clean-ups that walked their whole table every minute: expired mutes, old rate-limit windows (the addresses a user
-- signed in from are kept a month, the others a day: one index each, so neither walks the other), unreachable
-- hosts not marked failing yet (delivery's sweep marks them; dead hosts stay out of the index), expanded outbox
-- rows.
CREATE INDEX `mutes_expires` ON `mutes` (`expires_at`) WHERE expires_at IS NOT NULL;
--> statement-breakpoint
CREATE INDEX `rate_limits_windows` ON `rate_limits` (`window_start`) WHERE key NOT LIKE 'login:known:%';
--> statement-breakpoint
CREATE INDEX `rate_limits_known` ON `rate_limits` (`window_start`) WHERE key LIKE 'login:known:%';
--> statement-breakpoint
CREATE INDEX `instances_unreachable_unmarked` ON `instances` (`unreachable_since`) WHERE unreachable_since IS NOT NULL AND failing_since IS NULL;
--> statement-breakpoint
CREATE INDEX `federation_outbox_expanded` ON `federation_outbox` (`expanded_at`) WHERE body IS NOT NULL;
--> statement-breakpoint
-- The run-time settings' version (services/settings.ts): any write to the settings or the federation policies (the
-- admin API, the command line, a hand-written statement) adds one, so an isolate whose copy is past its TTL reads
-- this one row, not both tables, when nothing changed (the cron reads the settings every minute).
INSERT INTO `instance_keys` (`name`, `value`, `created_at`) VALUES ('settings_version', '1', 0);
--> statement-breakpoint
CREATE TRIGGER `instance_settings_version_insert` AFTER INSERT ON `instance_settings` BEGIN
	UPDATE `instance_keys` SET `value` = CAST(CAST(`value` AS INTEGER) + 1 AS TEXT) WHERE `name` = 'settings_version';
END;
--> statement-breakpoint
CREATE TRIGGER `instance_settings_version_update` AFTER UPDATE ON `instance_settings` BEGIN
	UPDATE `instance_keys` SET `value` = CAST(CAST(`value` AS INTEGER) + 1 AS TEXT) WHERE `name` = 'settings_version';
END;
--> statement-breakpoint
CREATE TRIGGER `instance_settings_version_delete` AFTER DELETE ON `instance_settings` BEGIN
	UPDATE `instance_keys` SET `value` = CAST(CAST(`value` AS INTEGER) + 1 AS TEXT) WHERE `name` = 'settings_version';
END;
--> statement-breakpoint
CREATE TRIGGER `federation_policies_version_insert` AFTER INSERT ON `federation_policies` BEGIN
	UPDATE `instance_keys` SET `value` = CAST(CAST(`value` AS INTEGER) + 1 AS TEXT) WHERE `name` = 'settings_version';
END;
--> statement-breakpoint
CREATE TRIGGER `federation_policies_version_update` AFTER UPDATE ON `federation_policies` BEGIN
	UPDATE `instance_keys` SET `value` = CAST(CAST(`value` AS INTEGER) + 1 AS TEXT) WHERE `name` = 'settings_version';
END;
--> statement-breakpoint
CREATE TRIGGER `federation_policies_version_delete` AFTER DELETE ON `federation_policies` BEGIN
	UPDATE `instance_keys` SET `value` = CAST(CAST(`value` AS INTEGER) + 1 AS TEXT) WHERE `name` = 'settings_version';
END;
