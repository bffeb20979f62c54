-- Listing this instance's custom emoji (GET /api/v1/custom_emojis, /api/v1/pleroma/emoji): walks only local rows,
-- already in shortcode order, however many remote emoji federation has stored. Written by hand; the lead
-- reconciles meta.
CREATE INDEX `custom_emojis_local` ON `custom_emojis` (`shortcode`) WHERE domain IS NULL;
