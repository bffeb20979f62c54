-- Emoji packs (issue 15). Written by hand; the lead reconciles meta.
-- A pack is a row here; its emoji are `custom_emojis` rows of this instance with `category` = the pack's name,
-- their files R2 keys under `emoji/<pack>/<filename>`. Metadata columns are NULL when the pack's metadata does
-- not name them (Pleroma answers only the keys it holds).
CREATE TABLE `emoji_packs` (
	`name` text PRIMARY KEY NOT NULL,
	`license` text,
	`homepage` text,
	`description` text,
	`fallback_src` text,
	`fallback_src_sha256` text,
	`share_files` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
-- A pack's files in shortcode order (show, list, archive) without walking other packs or remote emoji.
CREATE INDEX `custom_emojis_pack` ON `custom_emojis` (`category`,`shortcode`) WHERE domain IS NULL;
--> statement-breakpoint
-- The emoji listings' version: every change of this instance's emoji adds one in the change's own batch; the
-- listings' edge cache entries carry the version they were made at.
INSERT INTO `instance_keys` (`name`, `value`, `created_at`) VALUES ('emoji_version', '1', 0);
--> statement-breakpoint
-- Any write to this instance's emoji (the API, an import, a hand-written SQL statement) bumps the version.
CREATE TRIGGER `custom_emojis_version_insert` AFTER INSERT ON `custom_emojis` WHEN NEW.domain IS NULL BEGIN
	UPDATE `instance_keys` SET `value` = CAST(CAST(`value` AS INTEGER) + 1 AS TEXT) WHERE `name` = 'emoji_version';
END;
--> statement-breakpoint
CREATE TRIGGER `custom_emojis_version_update` AFTER UPDATE ON `custom_emojis` WHEN NEW.domain IS NULL OR OLD.domain IS NULL BEGIN
	UPDATE `instance_keys` SET `value` = CAST(CAST(`value` AS INTEGER) + 1 AS TEXT) WHERE `name` = 'emoji_version';
END;
--> statement-breakpoint
CREATE TRIGGER `custom_emojis_version_delete` AFTER DELETE ON `custom_emojis` WHEN OLD.domain IS NULL BEGIN
	UPDATE `instance_keys` SET `value` = CAST(CAST(`value` AS INTEGER) + 1 AS TEXT) WHERE `name` = 'emoji_version';
END;
