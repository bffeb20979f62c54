/**
 * A migration's statement as the Worker carries it (src/db/migrations.generated.ts, which every cold start loads):
 * without comments, runs of whitespace one space, and identifiers unquoted where quoting changes nothing (not an
 * SQLite keyword, letters, digits and `_` only). Text inside '…' and "…" literals is kept as it is. The bundle's
 * size is a budget (scripts/bundle-size.test.ts); D1 runs the statement the same.
 */

/** SQLite's keywords (https://sqlite.org/lang_keywords.html): an identifier spelt like one stays quoted. */
const KEYWORDS = new Set(
  `ABORT ACTION ADD AFTER ALL ALTER ALWAYS ANALYZE AND AS ASC ATTACH AUTOINCREMENT BEFORE BEGIN BETWEEN BY CASCADE CASE
  CAST CHECK COLLATE COLUMN COMMIT CONFLICT CONSTRAINT CREATE CROSS CURRENT CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP
  DATABASE DEFAULT DEFERRABLE DEFERRED DELETE DESC DETACH DISTINCT DO DROP EACH ELSE END ESCAPE EXCEPT EXCLUDE EXCLUSIVE
  EXISTS EXPLAIN FAIL FILTER FIRST FOLLOWING FOR FOREIGN FROM FULL GENERATED GLOB GROUP GROUPS HAVING IF IGNORE
  IMMEDIATE IN INDEX INDEXED INITIALLY INNER INSERT INSTEAD INTERSECT INTO IS ISNULL JOIN KEY LAST LEFT LIKE LIMIT MATCH
  MATERIALIZED NATURAL NO NOT NOTHING NOTNULL NULL NULLS OF OFFSET ON OR ORDER OTHERS OUTER OVER PARTITION PLAN PRAGMA
  PRECEDING PRIMARY QUERY RAISE RANGE RECURSIVE REFERENCES REGEXP REINDEX RELEASE RENAME REPLACE RESTRICT RETURNING
  RIGHT ROLLBACK ROW ROWS SAVEPOINT SELECT SET TABLE TEMP TEMPORARY THEN TIES TO TRANSACTION TRIGGER UNBOUNDED UNION
  UNIQUE UPDATE USING VACUUM VALUES VIEW VIRTUAL WHEN WHERE WINDOW WITH WITHOUT`.split(/\s+/),
);

const WORDY = /[A-Za-z0-9_`'"$?@:-]/;

export function compactSql(q: string): string {
  let out = "";
  let i = 0;
  // A space is written only between two words: around punctuation it changes nothing.
  let pending = false;
  const add = (text: string) => {
    if (pending && out && WORDY.test(out[out.length - 1]!) && WORDY.test(text[0]!)) out += " ";
    pending = false;
    out += text;
  };
  const space = () => {
    pending = true;
  };
  while (i < q.length) {
    const c = q[i]!;
    if (c === "'" || c === '"') {
      // A literal (or a double-quoted identifier), doubled quotes included, kept as it is.
      let j = i + 1;
      while (j < q.length && !(q[j] === c && q[j + 1] !== c)) j += q[j] === c ? 2 : 1;
      add(q.slice(i, j + 1));
      i = j + 1;
    } else if (c === "-" && q[i + 1] === "-") {
      const end = q.indexOf("\n", i);
      i = end < 0 ? q.length : end;
      space();
    } else if (c === "/" && q[i + 1] === "*") {
      const end = q.indexOf("*/", i + 2);
      i = end < 0 ? q.length : end + 2;
      space();
    } else if (/\s/.test(c)) {
      while (i < q.length && /\s/.test(q[i]!)) i++;
      space();
    } else if (c === "`") {
      const end = q.indexOf("`", i + 1);
      const name = q.slice(i + 1, end);
      add(/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !KEYWORDS.has(name.toUpperCase()) ? name : q.slice(i, end + 1));
      i = end + 1;
    } else {
      add(c);
      i++;
    }
  }
  return out;
}
