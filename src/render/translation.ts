/** Mastodon's Translation entity and Akkoma's translation answer, from a stored translation. */
import type { Translated } from "../services/translation";

export function renderTranslation(t: Translated) {
  return {
    content: t.content,
    spoiler_text: t.spoilerText,
    poll: t.poll ? { id: t.poll.id, options: t.poll.options.map((title) => ({ title })) } : null,
    media_attachments: t.media.map((m) => ({ id: m.id, description: m.description })),
    detected_source_language: t.detected,
    language: t.language,
    provider: t.provider,
  };
}

/** Akkoma's `GET /api/v1/statuses/:id/translations/:language`. */
export const renderAkkomaTranslation = (t: Translated) => ({ detected_language: t.detected, text: t.content });

/** Akkoma's language list: every language a translation may come from, and every one it may go into. */
export function renderAkkomaLanguages(pairs: Record<string, string[]>) {
  const targets = [...new Set(Object.values(pairs).flat())].sort();
  const entry = (code: string) => ({ code, name: code });
  return { source: Object.keys(pairs).sort().map(entry), target: targets.map(entry) };
}
