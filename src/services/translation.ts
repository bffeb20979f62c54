/**
 * Translating statuses (issue 47), Mastodon's `POST /api/v1/statuses/:id/translate` and Akkoma's routes over one
 * service. Two backends, as Mastodon has two: Workers AI (`AI` binding, `@cf/meta/m2m100-1.2b`; added by
 * `npm run deploy`) and a LibreTranslate-compatible server (`LIBRE_TRANSLATE_ENDPOINT`, Mastodon's variable names),
 * which wins when set (the host runs it for this), reached through the outbound guard like every fetch.
 *
 * - Only what the reader may see, and as Mastodon only public, unlisted (and local-only) statuses: a private post is
 *   not handed to a model or another server.
 * - The markup stays: links (mentions, hashtags, addresses), code and custom emoji are kept, the text between them
 *   is translated (content/translatable.ts); the spoiler, poll options and media descriptions too.
 * - Each (status, language, edit version) is translated once and kept (`status_translations`, gone with the status;
 *   an edit makes a new one and drops the old).
 * - Workers AI's neurons are estimated from the tokens sent and received (m2m100: 31,050 neurons per million tokens
 *   each way; a token taken as 3 bytes of UTF-8, which over-counts Latin text a little) and held against a daily
 *   budget (`TRANSLATION_DAILY_NEURONS`, the free 10,000 by default): past it, 503 until 00:00 UTC. Each user may
 *   have `TRANSLATIONS_PER_USER` translations made by the model a day; answers from the store are free.
 * - A post without a language is guessed at (content/language.ts); one already in the reader's language is answered
 *   as it is, without the model.
 */
import { and, asc, eq, lt, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now } from "../db/client";
import { mediaAttachments, polls, statusTranslations, translationDays, type StoredTranslation } from "../db/schema";
import { config, type Env } from "../env";
import { ApiError, forbidden, notFound, unprocessable } from "../lib/errors";
import { count } from "../lib/meter";
import { allowPrivateAddress, outboundFetch } from "../lib/outbound";
import { detectLanguage } from "../content/language";
import { translatable } from "../content/translatable";
import { htmlToText } from "../content/format";
import { countHits, throwIfOver } from "./rate-limit";
import { visibleStatus } from "./statuses";
import { dayOf } from "./usage-budget";

export const AI_MODEL = "@cf/meta/m2m100-1.2b";
/** m2m100-1.2b's price in neurons per token, each way (Workers AI pricing: 31,050 per million). */
const NEURONS_PER_TOKEN = 31_050 / 1_000_000;
/** Bounds of one translation: runs of text and characters (a longer post answers 422). */
export const MAX_UNITS = 64;
export const MAX_CHARS = 10_000;
const TRANSLATABLE = new Set(["public", "unlisted", "local"]);

/** The languages m2m100 reads and writes (its model card's list, ISO 639-1 where there is one). */
const M2M100 =
  "af am ar ast az ba be bg bn br bs ca ceb cs cy da de el en es et fa ff fi fr fy ga gd gl gu ha he hi hr ht hu hy id ig ilo is it ja jv ka kk km kn ko lb lg ln lo lt lv mg mk ml mn mr ms my ne nl no ns oc or pa pl ps pt ro ru sd si sk sl so sq sr ss su sv sw ta th tl tn tr uk ur uz vi wo xh yi yo zh zu".split(
    " ",
  );

interface Backend {
  provider: string;
  /** Source language → the languages it can be translated into. */
  languages(): Promise<Record<string, string[]>>;
  /** `source` null: the backend guesses (LibreTranslate's "auto"). */
  translate(
    texts: string[],
    source: string | null,
    target: string,
  ): Promise<{ texts: string[]; detected: string | null; neurons: number }>;
}

const unavailable = (message = "Translation service unavailable") => new ApiError(503, message);
const tokens = (s: string) => Math.ceil(new TextEncoder().encode(s).byteLength / 3);
export const neuronsFor = (texts: string[]) => Math.ceil(texts.reduce((n, t) => n + tokens(t), 0) * NEURONS_PER_TOKEN);

function workersAi(ai: Ai): Backend {
  const all: Record<string, string[]> = Object.fromEntries(M2M100.map((s) => [s, M2M100.filter((t) => t !== s)]));
  return {
    provider: "Workers AI",
    languages: async () => all,
    async translate(texts, source, target) {
      const out: string[] = [];
      // A few at a time: one post's runs, not a burst the platform would refuse.
      for (let i = 0; i < texts.length; i += 8) {
        const chunk = texts.slice(i, i + 8);
        const answers = await Promise.all(
          chunk.map((text) =>
            ai.run(AI_MODEL, { text, source_lang: source ?? "en", target_lang: target }).catch(() => {
              throw unavailable();
            }),
          ),
        );
        for (const a of answers) {
          const t = (a as { translated_text?: unknown }).translated_text;
          if (typeof t !== "string") throw unavailable();
          out.push(t);
        }
      }
      return { texts: out, detected: source, neurons: neuronsFor(texts) + neuronsFor(out) };
    },
  };
}

let libreLanguages: { endpoint: string; at: number; value: Record<string, string[]> } | null = null;

function libreTranslate(env: Env, endpoint: string): Backend {
  const base = endpoint.replace(/\/+$/, "");
  const opts = { allowPrivate: allowPrivateAddress(env), timeoutMs: 20_000, maxBytes: 1_000_000 };
  const key = env.LIBRE_TRANSLATE_API_KEY || undefined;
  return {
    provider: "LibreTranslate",
    async languages() {
      const t = Date.now();
      // Kept an hour; a failed answer a minute (nothing is offered meanwhile).
      const keep = libreLanguages && Object.keys(libreLanguages.value).length ? 3_600_000 : 60_000;
      if (libreLanguages?.endpoint === base && t - libreLanguages.at < keep) return libreLanguages.value;
      let value: Record<string, string[]> = {};
      try {
        const res = await outboundFetch(`${base}/languages`, { headers: { accept: "application/json" } }, opts);
        const list = res.ok ? ((await res.json()) as unknown) : null;
        if (Array.isArray(list)) {
          const codes = list
            .map((l) => (l as { code?: unknown }).code)
            .filter((c): c is string => typeof c === "string");
          value = Object.fromEntries(
            list.flatMap((l: { code?: unknown; targets?: unknown }) =>
              typeof l.code === "string"
                ? [
                    [
                      l.code,
                      (Array.isArray(l.targets) ? l.targets : codes).filter(
                        (c: unknown): c is string => typeof c === "string" && c !== l.code,
                      ),
                    ],
                  ]
                : [],
            ),
          );
        }
      } catch {
        // Unreachable: nothing offered until it is asked again.
      }
      libreLanguages = { endpoint: base, at: t, value };
      return value;
    },
    async translate(texts, source, target) {
      let res: Response;
      try {
        res = await outboundFetch(
          `${base}/translate`,
          {
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json" },
            body: JSON.stringify({ q: texts, source: source ?? "auto", target, format: "text", api_key: key }),
          },
          opts,
        );
      } catch {
        throw unavailable();
      }
      const body = (await res.json().catch(() => null)) as {
        translatedText?: unknown;
        detectedLanguage?: { language?: unknown } | { language?: unknown }[];
      } | null;
      const out = body?.translatedText;
      if (!res.ok || !Array.isArray(out) || out.length !== texts.length || !out.every((t) => typeof t === "string"))
        throw unavailable();
      const d = Array.isArray(body!.detectedLanguage) ? body!.detectedLanguage[0] : body!.detectedLanguage;
      return { texts: out, detected: typeof d?.language === "string" ? d.language : source, neurons: 0 };
    },
  };
}

/** The backend this instance translates with, or null (none configured, or turned off). */
function backend(env: Env): Backend | null {
  if (!config(env).translation.enabled) return null;
  if (env.LIBRE_TRANSLATE_ENDPOINT) return libreTranslate(env, env.LIBRE_TRANSLATE_ENDPOINT);
  return env.AI ? workersAi(env.AI) : null;
}

/** Whether `configuration.translation.enabled` is true: a backend is there and translation is not turned off. */
export const translationEnabled = (env: Env) => backend(env) !== null;

/** Mastodon's `translation_languages`: source → targets; `{}` without a backend. */
export async function translationLanguages(env: Env): Promise<Record<string, string[]>> {
  return (await backend(env)?.languages()) ?? {};
}

/** A language code as apps send it (`pt-BR`, `zh_Hant`, `EN`) → the ISO 639 part backends know. */
export function targetLanguage(given: string | undefined, fallback: string): string {
  const code = (given || fallback).split(/[-_]/)[0]!.toLowerCase();
  if (!/^[a-z]{2,3}$/.test(code)) throw unprocessable(`"${given}" is not a language code.`);
  return code;
}

export interface Translated extends StoredTranslation {
  language: string;
}

/** Translates a status the viewer may see into `target`, from the store when it was done before. */
export async function translateStatus(
  env: Env,
  d: DB,
  statusId: string,
  viewerId: string,
  target: string,
): Promise<Translated> {
  const engine = backend(env);
  if (!engine) throw notFound("Translation is not available on this server");
  const s = await visibleStatus(d, statusId, viewerId);
  if (!TRANSLATABLE.has(s.visibility)) throw forbidden("This status cannot be translated");
  const version = s.editedAt ?? 0;
  const t = now();
  const day = dayOf(t);
  const [stored, poll, media, spent] = await d.batch([
    d
      .select({ translation: statusTranslations.translation })
      .from(statusTranslations)
      .where(
        and(
          eq(statusTranslations.statusId, s.id),
          eq(statusTranslations.language, target),
          eq(statusTranslations.version, version),
        ),
      ),
    d.select({ id: polls.id, options: polls.options }).from(polls).where(eq(polls.statusId, s.id)),
    d
      .select({ id: mediaAttachments.id, description: mediaAttachments.description })
      .from(mediaAttachments)
      .where(and(eq(mediaAttachments.statusId, s.id), eq(mediaAttachments.removedByEdit, false)))
      .orderBy(asc(mediaAttachments.position), asc(mediaAttachments.id)),
    neuronsRow(d, t),
  ]);
  if (stored[0]) return { ...stored[0].translation, language: target };

  const content = translatable(s.content);
  const spoiler = translatable(s.spoilerText, false);
  const options = poll[0]?.options ?? [];
  const described = media.filter((m) => m.description);
  const units = [...content.units, ...spoiler.units, ...options, ...described.map((m) => m.description!)];
  const source =
    s.language?.split(/[-_]/)[0]?.toLowerCase() || detectLanguage(`${s.spoilerText}\n${htmlToText(s.content)}`);
  const original = (texts: string[], detected: string | null, provider: string): StoredTranslation => {
    let i = 0;
    const take = (n: number) => texts.slice(i, (i += n));
    return {
      content: content.rebuild(take(content.units.length)),
      spoilerText: spoiler.rebuild(take(spoiler.units.length)),
      poll: poll[0] ? { id: poll[0].id, options: take(options.length) } : null,
      media: (() => {
        const descriptions = take(described.length);
        return described.map((m, k) => ({ id: m.id, description: descriptions[k]! }));
      })(),
      detected: detected ?? source ?? "und",
      provider,
    };
  };
  // Already in the reader's language (or nothing to translate): answered as it is, no model, nothing stored.
  if (source === target || units.length === 0) return { ...original(units, source, engine.provider), language: target };
  if (units.length > MAX_UNITS || units.reduce((n, u) => n + u.length, 0) > MAX_CHARS)
    throw unprocessable("This status is too long to translate");
  if (source) {
    const languages = await engine.languages();
    // An empty list (the server's list unreachable) leaves it to the backend to refuse.
    if (Object.keys(languages).length && !languages[source]?.includes(target))
      throw forbidden(`Translation from "${source}" into "${target}" is not available`);
  }
  const cfg = config(env);
  const estimate = neuronsFor(units) * 2;
  if (engine.provider === "Workers AI" && (spent[0]?.neurons ?? 0) + estimate > cfg.translation.dailyNeurons)
    throw unavailable("Today's translation budget is spent: translation is back at 00:00 UTC.");
  throwIfOver(await countHits(d, [{ key: `translate:${viewerId}`, limit: cfg.rateLimits.translations }]));

  const result = await engine.translate(units, source, target);
  const translation = original(result.texts, result.detected, engine.provider);
  count("aiNeurons", result.neurons);
  await d.batch([
    d
      .insert(statusTranslations)
      .values({ statusId: s.id, language: target, version, translation, createdAt: t })
      .onConflictDoNothing(),
    d
      .delete(statusTranslations)
      .where(
        and(
          eq(statusTranslations.statusId, s.id),
          eq(statusTranslations.language, target),
          lt(statusTranslations.version, version),
        ),
      ),
    d
      .insert(translationDays)
      .values({ day, neurons: result.neurons })
      .onConflictDoUpdate({
        target: translationDays.day,
        set: { neurons: sql`${translationDays.neurons} + ${result.neurons}` },
      }),
  ]);
  return { ...translation, language: target };
}

/** The day's neuron figure (a select for a batch): what translation spent on the UTC day of `t`. */
export const neuronsRow = (d: DB, t: number) =>
  d
    .select({ neurons: translationDays.neurons })
    .from(translationDays)
    .where(eq(translationDays.day, dayOf(t)));
