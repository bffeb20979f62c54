/**
 * HTML character references to text, the way the HTML parser decodes them, by the `entities` library (the full
 * WHATWG table, legacy names without a semicolon, Windows-1252 for C1 numeric references): one well-kept table
 * instead of a partial hand-written one.
 */
import { decodeHTML, decodeHTMLAttribute } from "entities";

/**
 * Decodes character references in `text`, text content by default. With `inAttribute` (an attribute value), a
 * semicolon-less legacy reference followed by a letter, digit or "=" is left alone, as browsers do (so
 * "?a=1&copy=2" stays a query string).
 */
export function decodeEntities(text: string, inAttribute = false): string {
  if (!text.includes("&")) return text;
  return inAttribute ? decodeHTMLAttribute(text) : decodeHTML(text);
}
