-- Fedify's key-value store on D1 (src/federation/kv.ts): cached remote documents and keys, idempotence marks.
-- `key` is the JSON array of the key's parts, so a prefix of parts is a prefix of the text; `value` is JSON;
-- `expires_at` (ms) is null for entries that never expire. Written by hand; the lead reconciles migrations/meta.
CREATE TABLE `fedify_kv` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`expires_at` integer
);
--> statement-breakpoint
CREATE INDEX `fedify_kv_expires` ON `fedify_kv` (`expires_at`) WHERE `expires_at` IS NOT NULL;
--> statement-breakpoint
-- The Ed25519 key of Object Integrity Proofs (FEP-8b32), as a private JWK (it carries the public point `x`),
-- made with the RSA key when something first signs.
ALTER TABLE `credentials` ADD `proof_key` text;
