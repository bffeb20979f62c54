-- Notifications and bookmarks get sequence ids (src/db/ids.ts `seqIds`): 16 decimal digits, the time in
-- milliseconds times 1000 or one more than the highest id, so Pleroma-FE's `parseInt` reads them as increasing
-- integers (issue 29). Existing ULIDs are rewritten in their order: each becomes its millisecond times 1000, or one
-- more than the id before it when that is higher (a running maximum: max(ms*1000 - rank) over the rows so far,
-- plus the rank). Notification markers holding a ULID move to the newest rewritten id at or before them.
CREATE TABLE `seq_id_map` (`old` text PRIMARY KEY NOT NULL, `new` text NOT NULL);
--> statement-breakpoint
INSERT INTO `seq_id_map` (`old`, `new`)
SELECT id, printf('%016d', max(ms * 1000 - rn) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) + rn)
FROM (SELECT id, ((instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 1, 1)) - 1) * 35184372088832 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 2, 1)) - 1) * 1099511627776 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 3, 1)) - 1) * 34359738368 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 4, 1)) - 1) * 1073741824 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 5, 1)) - 1) * 33554432 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 6, 1)) - 1) * 1048576 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 7, 1)) - 1) * 32768 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 8, 1)) - 1) * 1024 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 9, 1)) - 1) * 32 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 10, 1)) - 1) * 1) AS ms, row_number() OVER (ORDER BY id) AS rn FROM `notifications` WHERE length(id) = 26);
--> statement-breakpoint
UPDATE `notifications` SET `id` = (SELECT `new` FROM `seq_id_map` WHERE `old` = `notifications`.`id`) WHERE length(`id`) = 26;
--> statement-breakpoint
UPDATE `markers` SET `last_read_id` = coalesce(
    (SELECT `new` FROM `seq_id_map` WHERE `old` <= `markers`.`last_read_id` ORDER BY `old` DESC LIMIT 1),
    printf('%016d', ((instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(`markers`.`last_read_id`, 1, 1)) - 1) * 35184372088832 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(`markers`.`last_read_id`, 2, 1)) - 1) * 1099511627776 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(`markers`.`last_read_id`, 3, 1)) - 1) * 34359738368 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(`markers`.`last_read_id`, 4, 1)) - 1) * 1073741824 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(`markers`.`last_read_id`, 5, 1)) - 1) * 33554432 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(`markers`.`last_read_id`, 6, 1)) - 1) * 1048576 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(`markers`.`last_read_id`, 7, 1)) - 1) * 32768 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(`markers`.`last_read_id`, 8, 1)) - 1) * 1024 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(`markers`.`last_read_id`, 9, 1)) - 1) * 32 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(`markers`.`last_read_id`, 10, 1)) - 1) * 1) * 1000))
  WHERE `timeline` = 'notifications' AND length(`last_read_id`) = 26;
--> statement-breakpoint
DELETE FROM `seq_id_map`;
--> statement-breakpoint
INSERT INTO `seq_id_map` (`old`, `new`)
SELECT id, printf('%016d', max(ms * 1000 - rn) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) + rn)
FROM (SELECT id, ((instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 1, 1)) - 1) * 35184372088832 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 2, 1)) - 1) * 1099511627776 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 3, 1)) - 1) * 34359738368 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 4, 1)) - 1) * 1073741824 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 5, 1)) - 1) * 33554432 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 6, 1)) - 1) * 1048576 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 7, 1)) - 1) * 32768 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 8, 1)) - 1) * 1024 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 9, 1)) - 1) * 32 + (instr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 10, 1)) - 1) * 1) AS ms, row_number() OVER (ORDER BY id) AS rn FROM `bookmarks` WHERE length(id) = 26);
--> statement-breakpoint
UPDATE `bookmarks` SET `id` = (SELECT `new` FROM `seq_id_map` WHERE `old` = `bookmarks`.`id`) WHERE length(`id`) = 26;
--> statement-breakpoint
DROP TABLE `seq_id_map`;
