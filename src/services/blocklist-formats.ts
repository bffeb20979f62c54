/**
 * The formats blocklists are shared in (issue 48): Mastodon's CSV (`#domain,#severity,#reject_media,
 * #reject_reports,#public_comment,#obfuscate`, what Mastodon's admin exports and imports and Oliphant's lists use),
 * GoToSocial's JSON (an array of `{domain, public_comment, private_comment, obfuscate}`) and plain lists (a domain a
 * line, `#` comments). Parsing is bounded (size, entries) and strict about what would corrupt the rules (a bad
 * domain or severity is named in the error), lenient about what is only unfamiliar (unknown columns, BOM, CRLF).
 */
import { unprocessable } from "../lib/errors";
import { normalizeDomain, SEVERITIES, type DomainBlock, type Severity } from "./domain-rules";

export const FORMATS = ["mastodon_csv", "gotosocial_json", "plain"] as const;
export type Format = (typeof FORMATS)[number];
export const MAX_LIST_BYTES = 2_000_000;
export const MAX_ENTRIES = 20_000;

const defaults = (domain: string): DomainBlock => ({
  domain,
  severity: "suspend",
  rejectMedia: false,
  rejectReports: false,
  publicComment: "",
  privateComment: "",
  obfuscate: false,
});

/** RFC 4180 rows (quoted fields, doubled quotes, CRLF or LF). */
function csvRows(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') ((field += '"'), i++);
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === "") quoted = true;
    else if (c === ",") (row.push(field), (field = ""));
    else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      row.push(field);
      rows.push(row);
      ((row = []), (field = ""));
    } else field += c;
  }
  if (field !== "" || row.length) (row.push(field), rows.push(row));
  return rows.filter((r) => r.some((f) => f.trim() !== ""));
}

const truthy = (v: string | undefined) => /^(true|1|yes|t)$/i.test((v ?? "").trim());

function domainOf(given: unknown, where: string): string {
  const d = typeof given === "string" ? normalizeDomain(given) : null;
  if (!d) throw unprocessable(`${where}: "${String(given).slice(0, 100)}" is not a domain`);
  return d;
}

/** A list's rules, deduplicated by domain (the last entry wins). */
export function parseList(text: string, format: Format): DomainBlock[] {
  if (new TextEncoder().encode(text).byteLength > MAX_LIST_BYTES)
    throw unprocessable(`The list is larger than ${MAX_LIST_BYTES / 1_000_000} MB`);
  const body = text.replace(/^\uFEFF/, "");
  let out: DomainBlock[];
  if (format === "gotosocial_json") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      throw unprocessable("The list is not JSON");
    }
    if (!Array.isArray(parsed)) throw unprocessable("A GoToSocial list is a JSON array");
    if (parsed.length > MAX_ENTRIES) throw unprocessable(`The list has more than ${MAX_ENTRIES} entries`);
    out = parsed.map((e, i) => {
      if (!e || typeof e !== "object") throw unprocessable(`entry ${i + 1}: not an object`);
      const o = e as Record<string, unknown>;
      const text = (v: unknown) => (typeof v === "string" ? v.slice(0, 1000) : "");
      return {
        ...defaults(domainOf(o.domain, `entry ${i + 1}`)),
        publicComment: text(o.public_comment),
        privateComment: text(o.private_comment),
        obfuscate: o.obfuscate === true,
      };
    });
  } else if (format === "plain") {
    const lines = body
      .split(/\r?\n/)
      .map((l) => l.replace(/#.*$/, "").trim())
      .filter(Boolean);
    if (lines.length > MAX_ENTRIES) throw unprocessable(`The list has more than ${MAX_ENTRIES} entries`);
    out = lines.map((l, i) => defaults(domainOf(l, `line ${i + 1}`)));
  } else {
    const rows = csvRows(body);
    const first = rows[0]?.map((h) => h.trim().toLowerCase().replace(/^#/, ""));
    const header = first?.includes("domain") ? first : null;
    const data = header ? rows.slice(1) : rows;
    if (data.length > MAX_ENTRIES) throw unprocessable(`The list has more than ${MAX_ENTRIES} entries`);
    const col = (name: string) => (header ? header.indexOf(name) : name === "domain" ? 0 : -1);
    const [dom, sev, media, reports, pub, priv, obf] = [
      "domain",
      "severity",
      "reject_media",
      "reject_reports",
      "public_comment",
      "private_comment",
      "obfuscate",
    ].map(col);
    out = data.map((r, i) => {
      const where = `row ${i + (header ? 2 : 1)}`;
      const severity = (sev! >= 0 && r[sev!]?.trim().toLowerCase()) || "suspend";
      if (!(SEVERITIES as readonly string[]).includes(severity))
        throw unprocessable(`${where}: "${severity.slice(0, 40)}" is not a severity (noop, silence, suspend)`);
      return {
        domain: domainOf(r[dom!], where),
        severity: severity as Severity,
        rejectMedia: media! >= 0 && truthy(r[media!]),
        rejectReports: reports! >= 0 && truthy(r[reports!]),
        publicComment: (pub! >= 0 ? (r[pub!] ?? "") : "").slice(0, 1000),
        privateComment: (priv! >= 0 ? (r[priv!] ?? "") : "").slice(0, 1000),
        obfuscate: obf! >= 0 && truthy(r[obf!]),
      };
    });
  }
  return [...new Map(out.map((b) => [b.domain, b])).values()];
}

const csvField = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

/** Rules as a list in `format` (no private comments: an export is for sharing). */
export function serializeList(blocks: DomainBlock[], format: Format): { body: string; type: string } {
  if (format === "gotosocial_json")
    return {
      body: JSON.stringify(
        blocks.map((b) => ({ domain: b.domain, public_comment: b.publicComment, obfuscate: b.obfuscate })),
      ),
      type: "application/json",
    };
  if (format === "plain")
    return { body: blocks.map((b) => b.domain).join("\n") + "\n", type: "text/plain; charset=utf-8" };
  const lines = ["#domain,#severity,#reject_media,#reject_reports,#public_comment,#obfuscate"];
  for (const b of blocks)
    lines.push(
      [
        b.domain,
        b.severity,
        String(b.rejectMedia),
        String(b.rejectReports),
        csvField(b.publicComment),
        String(b.obfuscate),
      ].join(","),
    );
  return { body: lines.join("\n") + "\n", type: "text/csv; charset=utf-8" };
}
