/**
 * HTML character references to text, the way the HTML parser decodes them: numeric references (with or
 * without the closing semicolon; 0x80–0x9F mean Windows-1252), the HTML 4 named set plus `&apos;` and the
 * uppercase QUOT/AMP/LT/GT/COPY/REG, and the legacy names that may omit the semicolon. An unknown name is left
 * as written.
 */

const LATIN1_NAMES =
  "nbsp iexcl cent pound curren yen brvbar sect uml copy ordf laquo not shy reg macr deg plusmn sup2 sup3 acute micro para middot cedil sup1 ordm raquo frac14 frac12 frac34 iquest " +
  "Agrave Aacute Acirc Atilde Auml Aring AElig Ccedil Egrave Eacute Ecirc Euml Igrave Iacute Icirc Iuml ETH Ntilde Ograve Oacute Ocirc Otilde Ouml times Oslash Ugrave Uacute Ucirc Uuml Yacute THORN szlig " +
  "agrave aacute acirc atilde auml aring aelig ccedil egrave eacute ecirc euml igrave iacute icirc iuml eth ntilde ograve oacute ocirc otilde ouml divide oslash ugrave uacute ucirc uuml yacute thorn yuml";

const GREEK_UPPER = "Alpha Beta Gamma Delta Epsilon Zeta Eta Theta Iota Kappa Lambda Mu Nu Xi Omicron Pi Rho _ Sigma Tau Upsilon Phi Chi Psi Omega";
const GREEK_LOWER = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigmaf sigma tau upsilon phi chi psi omega";

const OTHER_ENTITIES: Record<string, number> = {
  quot: 34, amp: 38, apos: 39, lt: 60, gt: 62, QUOT: 34, AMP: 38, LT: 60, GT: 62, COPY: 169, REG: 174,
  OElig: 338, oelig: 339, Scaron: 352, scaron: 353, Yuml: 376, fnof: 402, circ: 710, tilde: 732,
  thetasym: 977, upsih: 978, piv: 982,
  ensp: 8194, emsp: 8195, thinsp: 8201, zwnj: 8204, zwj: 8205, lrm: 8206, rlm: 8207, ndash: 8211, mdash: 8212,
  lsquo: 8216, rsquo: 8217, sbquo: 8218, ldquo: 8220, rdquo: 8221, bdquo: 8222, dagger: 8224, Dagger: 8225,
  bull: 8226, hellip: 8230, permil: 8240, prime: 8242, Prime: 8243, lsaquo: 8249, rsaquo: 8250, oline: 8254,
  frasl: 8260, euro: 8364, image: 8465, weierp: 8472, real: 8476, trade: 8482, alefsym: 8501,
  larr: 8592, uarr: 8593, rarr: 8594, darr: 8595, harr: 8596, crarr: 8629, lArr: 8656, uArr: 8657, rArr: 8658,
  dArr: 8659, hArr: 8660, forall: 8704, part: 8706, exist: 8707, empty: 8709, nabla: 8711, isin: 8712,
  notin: 8713, ni: 8715, prod: 8719, sum: 8721, minus: 8722, lowast: 8727, radic: 8730, prop: 8733,
  infin: 8734, ang: 8736, and: 8743, or: 8744, cap: 8745, cup: 8746, int: 8747, there4: 8756, sim: 8764,
  cong: 8773, asymp: 8776, ne: 8800, equiv: 8801, le: 8804, ge: 8805, sub: 8834, sup: 8835, nsub: 8836,
  sube: 8838, supe: 8839, oplus: 8853, otimes: 8855, perp: 8869, sdot: 8901, lceil: 8968, rceil: 8969,
  lfloor: 8970, rfloor: 8971, lang: 10216, rang: 10217, loz: 9674, spades: 9824, clubs: 9827, hearts: 9829,
  diams: 9830,
};

const NAMED_ENTITIES = new Map<string, number>();
LATIN1_NAMES.split(" ").forEach((name, i) => NAMED_ENTITIES.set(name, 160 + i));
GREEK_UPPER.split(" ").forEach((name, i) => name !== "_" && NAMED_ENTITIES.set(name, 913 + i));
GREEK_LOWER.split(" ").forEach((name, i) => NAMED_ENTITIES.set(name, 945 + i));
for (const [name, code] of Object.entries(OTHER_ENTITIES)) NAMED_ENTITIES.set(name, code);

/** Names the HTML parser also recognises without a trailing semicolon. */
const LEGACY_ENTITIES = new Set([...LATIN1_NAMES.split(" "), "amp", "lt", "gt", "quot", "AMP", "LT", "GT", "QUOT", "COPY", "REG"]);

/** Numeric references to C1 controls mean Windows-1252, per the HTML parser. */
const WINDOWS_1252: Record<number, number> = {
  0x80: 0x20ac, 0x82: 0x201a, 0x83: 0x0192, 0x84: 0x201e, 0x85: 0x2026, 0x86: 0x2020, 0x87: 0x2021,
  0x88: 0x02c6, 0x89: 0x2030, 0x8a: 0x0160, 0x8b: 0x2039, 0x8c: 0x0152, 0x8e: 0x017d, 0x91: 0x2018,
  0x92: 0x2019, 0x93: 0x201c, 0x94: 0x201d, 0x95: 0x2022, 0x96: 0x2013, 0x97: 0x2014, 0x98: 0x02dc,
  0x99: 0x2122, 0x9a: 0x0161, 0x9b: 0x203a, 0x9c: 0x0153, 0x9e: 0x017e, 0x9f: 0x0178,
};

const REFERENCE = /&(?:#([0-9]+);?|#[xX]([0-9a-fA-F]+);?|([A-Za-z][A-Za-z0-9]*)(;?))/g;

function numericReference(code: number): string {
  if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return "\uFFFD";
  return String.fromCodePoint(WINDOWS_1252[code] ?? code);
}

/**
 * Decodes character references in `text`, text content by default. With `inAttribute` (an attribute value), a
 * semicolon-less legacy reference followed by a letter, digit or "=" is left alone, as browsers do (so
 * "?a=1&copy=2" stays a query string).
 */
export function decodeEntities(text: string, inAttribute = false): string {
  if (!text.includes("&")) return text;
  return text.replace(REFERENCE, (match, dec: string | undefined, hex: string | undefined, name: string | undefined, semi: string, offset: number) => {
    if (dec !== undefined) return numericReference(dec.length > 8 ? 0x110000 : parseInt(dec, 10));
    if (hex !== undefined) return numericReference(hex.length > 8 ? 0x110000 : parseInt(hex, 16));
    if (name === undefined) return match;
    if (semi) {
      const code = NAMED_ENTITIES.get(name);
      if (code !== undefined) return String.fromCodePoint(code);
    }
    // Longest legacy name that prefixes what was written.
    for (let len = name.length; len >= 2; len--) {
      const prefix = name.slice(0, len);
      if (!LEGACY_ENTITIES.has(prefix)) continue;
      if (inAttribute) {
        const next = len < name.length ? name[len] : semi || text[offset + match.length] || "";
        if (/[A-Za-z0-9=]/.test(next)) return match;
      }
      return String.fromCodePoint(NAMED_ENTITIES.get(prefix)!) + name.slice(len) + semi;
    }
    return match;
  });
}
