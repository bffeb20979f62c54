-- A description or focal point sent with PUT /api/v1/media/:id for media already on a status (Pleroma-FE sends them
-- just before its edit): kept apart until the edit takes it, so the edit sees what changed and the history keeps
-- what the status showed before.
ALTER TABLE `media_attachments` ADD `pending` text;
