-- The last TOTP time step accepted per user: a code is accepted once, never again within its window (issue 28).
ALTER TABLE `credentials` ADD `totp_last_step` integer;
