-- Which HTTP signature scheme each host accepted (issue 49; federation/door/signature-specs.ts): `rfc9421` or
-- `draft-cavage-http-signatures-12`; NULL: not known yet (draft-cavage is tried first). Written only when it
-- changes. Adding a nullable column rewrites no row.
ALTER TABLE `instances` ADD COLUMN `signature_spec` text;
