-- Delivery (src/federation/delivery.ts): a host whose deliveries were given up after about two days of retries is
-- marked failing (cleared by its next success). Written by hand; the lead reconciles meta.
ALTER TABLE `instances` ADD `failing_since` integer;
