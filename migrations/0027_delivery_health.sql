-- Delivery at scale (issue 18): when a host's current run of failures began (a host failing for over a day is
-- only probed, every few hours), and each delivery's last failed attempt and error (the healthcheck's figures).
-- Written by hand; the lead reconciles meta.
ALTER TABLE `instances` ADD `unreachable_since` integer;
--> statement-breakpoint
ALTER TABLE `federation_deliveries` ADD `last_attempt_at` integer;
--> statement-breakpoint
ALTER TABLE `federation_deliveries` ADD `last_error` text;
