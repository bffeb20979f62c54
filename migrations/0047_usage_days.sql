-- The daily budget meter (issue 42; services/usage-budget.ts): one row per UTC day, the day the plan's daily caps
-- reset. The estimate: what each isolate counted (lib/meter.ts), added now and then by one upsert. Each `month_`
-- column carries the month's running total up to and including the day (the first upsert of a day starts from the
-- month's latest row), so the monthly caps are read from this one row as well. `exact`: the GraphQL Analytics API's
-- figures (JSON) when the host gave a token, refreshed by the cron. `warned`: the caps the admins were mailed about
-- that day (a JSON array), so each is mailed once a day. `plan`: the plan the Worker was deployed for (`PLAN`) when
-- it last wrote the row, so that the guards reading the row know the caps.
CREATE TABLE `usage_days` (
	`day` text PRIMARY KEY NOT NULL,
	`requests` integer DEFAULT 0 NOT NULL,
	`rows_read` integer DEFAULT 0 NOT NULL,
	`rows_written` integer DEFAULT 0 NOT NULL,
	`durable_object_requests` integer DEFAULT 0 NOT NULL,
	`r2_class_a` integer DEFAULT 0 NOT NULL,
	`r2_class_b` integer DEFAULT 0 NOT NULL,
	`image_transformations` integer DEFAULT 0 NOT NULL,
	`month_requests` integer DEFAULT 0 NOT NULL,
	`month_rows_read` integer DEFAULT 0 NOT NULL,
	`month_rows_written` integer DEFAULT 0 NOT NULL,
	`month_durable_object_requests` integer DEFAULT 0 NOT NULL,
	`month_r2_class_a` integer DEFAULT 0 NOT NULL,
	`month_r2_class_b` integer DEFAULT 0 NOT NULL,
	`month_image_transformations` integer DEFAULT 0 NOT NULL,
	`exact` text,
	`warned` text DEFAULT '[]' NOT NULL,
	`plan` text DEFAULT 'free' NOT NULL,
	`updated_at` integer NOT NULL
);
