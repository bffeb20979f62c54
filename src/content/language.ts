/**
 * A cheap guess at a text's language, for posts that arrive without one (issue 47): enough to show the source
 * language and not to send a post already in the reader's language to the model. Scripts decide most languages
 * outright (kana, Hangul, Cyrillic, Greek…); Latin-script text is scored by its most frequent short words.
 *
 * Not a library: franc-min (56 KiB gzipped) or tinyld (34 KiB) would take what is left of the bundle's 800 KiB
 * budget (scripts/bundle-size.test.ts) for a guess that only picks the model's source language.
 */

/** Scripts that name one language (or one most likely), tested in order on the text's letters. */
const SCRIPTS: [RegExp, string][] = [
  [/[\u3040-\u30ff]/u, "ja"], // kana: Japanese even among kanji
  [/[\uac00-\ud7af\u1100-\u11ff]/u, "ko"],
  [/\p{Script=Han}/u, "zh"],
  [/[іїєґІЇЄҐ]/u, "uk"],
  [/\p{Script=Cyrillic}/u, "ru"],
  [/\p{Script=Greek}/u, "el"],
  [/[پچژگ]/u, "fa"],
  [/\p{Script=Arabic}/u, "ar"],
  [/\p{Script=Hebrew}/u, "he"],
  [/\p{Script=Thai}/u, "th"],
  [/\p{Script=Devanagari}/u, "hi"],
  [/\p{Script=Bengali}/u, "bn"],
  [/\p{Script=Tamil}/u, "ta"],
  [/\p{Script=Georgian}/u, "ka"],
  [/\p{Script=Armenian}/u, "hy"],
];

/** Each Latin-script language's most frequent words (function words: they carry the language, not the topic). */
const WORDS: Record<string, string> = {
  en: "the and is are was to of in that it for you with on this",
  de: "der die das und ist nicht ich ein eine zu den mit es sie auf",
  fr: "le la les et est un une des je pas que il elle du en",
  es: "el la los las y es un una que de en no por para con",
  it: "il lo la gli le e è un una che di non per con sono",
  pt: "o a os as e é um uma que de não para com do da",
  nl: "de het een en is van ik niet dat die te op zijn met voor",
  sv: "och det att är en som jag inte på för med har den till av",
  da: "og det at er en som jeg ikke på for med har den til af",
  nb: "og det er en som jeg ikke på for med har den til av om",
  fi: "ja on ei se että oli hän mutta kun niin tämä myös ovat minä sinä",
  pl: "i w nie na się jest to że z do jak ale co tak po",
  cs: "a je to v na se že s jsem ale jak by být ve pro",
  tr: "ve bir bu da de için ne ile çok ama gibi daha ben sen var",
  id: "dan yang di ini itu dengan untuk tidak ada dari saya akan juga ke kita",
  ca: "el la els les i és un una que de no per amb del al",
  ro: "și este un o că de nu pe cu la în mai dar ce sunt",
  hu: "a az és egy hogy nem is van de meg ez azt csak már volt",
};

const LOOKUP = new Map<string, Set<string>>(Object.entries(WORDS).map(([k, v]) => [k, new Set(v.split(" "))]));

/**
 * The ISO 639-1 code the text is most likely in, or null when it cannot tell (too little text, no known words).
 * Bounded: only the first 2,000 characters are looked at.
 */
export function detectLanguage(text: string): string | null {
  const sample = text.slice(0, 2000);
  const letters = sample.replace(/[^\p{L}]+/gu, "");
  if (letters.length < 3) return null;
  for (const [re, lang] of SCRIPTS) if (re.test(letters)) return lang;
  const words = sample.toLowerCase().match(/\p{L}+/gu) ?? [];
  let best: string | null = null;
  let bestScore = 0;
  for (const [lang, set] of LOOKUP) {
    let score = 0;
    for (const w of words) if (set.has(w)) score++;
    if (score > bestScore) [best, bestScore] = [lang, score];
  }
  // One function word is too little to tell languages that share them (de/nl, da/nb, es/pt).
  return bestScore >= 2 || (bestScore === 1 && words.length <= 3) ? best : null;
}
