-- Issue 44: when the sign-in that made a token passed its second factor (the MFA challenge), so that new backup
-- codes asked for soon after need no password again (Pleroma-FE sends none).
ALTER TABLE `tokens` ADD `second_factor_at` integer;
