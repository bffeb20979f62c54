-- What is known of an attachment's picture (issue 32): `{"original": {"width", "height"}, "focus": {"x", "y"}}`,
-- read from the file at upload (content/image-metadata.ts) and the uploader's focal point; rendered as `meta`.
ALTER TABLE `media_attachments` ADD `meta` text;
