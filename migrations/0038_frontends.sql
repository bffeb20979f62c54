-- Installed frontends (issue 34, Pleroma's `:frontends`): one row per name and ref, naming the build whose files
-- sit in R2 under `frontends/<name>/<ref>/<build>/`. A new install of the same ref writes a new build and then
-- swaps the row, so a half-written install is never served; `files` lists the build's paths, types and sizes. The
-- build it replaced (`previous_build`, at `replaced_at`) is kept an hour for pages still loading its files.
CREATE TABLE `frontends` (
	`name` text NOT NULL,
	`ref` text NOT NULL,
	`build` text NOT NULL,
	`files` text NOT NULL,
	`bytes` integer NOT NULL,
	`installed_at` integer NOT NULL,
	`previous_build` text,
	`replaced_at` integer,
	PRIMARY KEY(`name`, `ref`)
);
