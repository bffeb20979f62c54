-- Full-text search over statuses (SQLite FTS5). A row's rowid is the status's `search_rowid`; rows are written
-- and removed with their statuses, in the same batches (src/services/statuses.ts). `body` is the plain text of
-- the content and the content warning.
CREATE VIRTUAL TABLE `statuses_fts` USING fts5(`body`, tokenize = 'unicode61 remove_diacritics 2');
