/**
 * Translation (issue 47) through HTTP: Mastodon's and Akkoma's routes with a stand-in Workers AI binding (the real
 * one cannot run here) and a stand-in LibreTranslate server behind the outbound guard.
 */
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { call, json, makeAdmin, post, registerUser, scopedToken, valid, type TestUser } from "./helpers";
import { InstanceV2Schema } from "../src/schemas/instance";
import { AkkomaTranslationLanguagesSchema, AkkomaTranslationSchema, TranslationSchema } from "../src/schemas/status";
import { MAX_UNITS, neuronsFor } from "../src/services/translation";
import { measure } from "../src/lib/meter";
import { detectLanguage } from "../src/content/language";

/** A stand-in `AI` binding: answers m2m100's shape ("[de] text") and records what it was asked. */
function fakeAi(fail = false) {
  const calls: { model: string; text: string; source_lang?: string; target_lang: string }[] = [];
  const ai = {
    async run(model: string, input: { text: string; source_lang?: string; target_lang: string }) {
      calls.push({ model, ...input });
      if (fail) throw new Error("AI down");
      return { translated_text: `[${input.target_lang}] ${input.text}` };
    },
  };
  return { ai, calls };
}

const withAi = (ai: unknown, vars: Record<string, unknown> = {}) => ({ AI: ai, ...vars }) as Record<string, string>;

async function translate(u: TestUser, id: string, vars: Record<string, string>, lang = "de", status = 200) {
  return json(`/api/v1/statuses/${id}/translate`, { method: "POST", token: u.token, body: { lang }, vars, status });
}

async function rows(sql: string, ...args: unknown[]) {
  return (
    await env.DB.prepare(sql)
      .bind(...args)
      .all()
  ).results;
}

let restore: (() => void) | null = null;
afterEach(() => {
  restore?.();
  restore = null;
});

describe("without a backend", () => {
  it("says so where apps look, and the routes answer as Mastodon's and Akkoma's do", async () => {
    const u = await registerUser();
    const v2 = valid(InstanceV2Schema, await json("/api/v2/instance"));
    expect(v2.configuration.translation.enabled).toBe(false);
    expect(await json("/api/v1/instance/translation_languages")).toEqual({});
    expect(await json("/api/v1/akkoma/translation/languages")).toEqual({});
    const s = await post(u, { status: "Hello there", language: "en" });
    const res = await json(`/api/v1/statuses/${s.id}/translate`, { method: "POST", token: u.token, status: 404 });
    expect(res.error).toMatch(/not available/);
    // Turned off: the binding is there, translation is not.
    const { ai } = fakeAi();
    const off = valid(
      InstanceV2Schema,
      await json("/api/v2/instance", { vars: withAi(ai, { TRANSLATION_ENABLED: "false" }) }),
    );
    expect(off.configuration.translation.enabled).toBe(false);
  });
});

describe("with Workers AI", () => {
  it("translates the text between the markup, keeps mentions, tags, links and emoji, and the rest of the post", async () => {
    const [author, reader] = await Promise.all([registerUser(), registerUser()]);
    const { ai, calls } = fakeAi();
    const vars = withAi(ai);
    const v2 = valid(InstanceV2Schema, await json("/api/v2/instance", { vars }));
    expect(v2.configuration.translation.enabled).toBe(true);
    const languages = valid(
      z.record(z.string(), z.array(z.string())),
      await json("/api/v1/instance/translation_languages", { vars }),
    );
    expect(languages.en).toContain("de");
    expect(languages.en).not.toContain("en");
    valid(AkkomaTranslationLanguagesSchema, await json("/api/v1/akkoma/translation/languages", { vars }));

    const form = new FormData();
    form.set(
      "file",
      new File(
        [
          Uint8Array.from(
            atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="),
            (c) => c.charCodeAt(0),
          ),
        ],
        "a.png",
      ),
    );
    form.set("description", "A cat on a mat");
    const media = await json("/api/v1/media", { method: "POST", token: author.token, body: form });
    const s = await post(author, {
      status: `Hello @${reader.username} look at #cats on https://example.com/page :blobcat: & more`,
      spoiler_text: "Cats ahead",
      language: "en",
      media_ids: [media.id],
    });
    const withPoll = await post(author, {
      status: "Which one?",
      language: "en",
      poll: { options: ["Yes please", "No thanks"], expires_in: 3600 },
    });
    const t = valid(TranslationSchema, await translate(reader, s.id, vars));
    expect(t.provider).toBe("Workers AI");
    expect(t.detected_source_language).toBe("en");
    expect(t.language).toBe("de");
    expect(t.spoiler_text).toBe("[de] Cats ahead");
    expect(t.poll).toBeNull();
    expect(t.media_attachments).toEqual([{ id: media.id, description: "[de] A cat on a mat" }]);
    // Every link of the original (mention, hashtag, address) is in the translation as it was.
    for (const a of s.content.match(/<a [^>]*>.*?<\/a>/g)!) expect(t.content).toContain(a);
    expect(t.content).toContain(":blobcat:");
    expect(t.content).toContain("[de] Hello");
    expect(t.content).toContain("&amp;");
    const polled = valid(TranslationSchema, await translate(reader, withPoll.id, vars));
    expect(polled.poll).toEqual({
      id: withPoll.poll.id,
      options: [{ title: "[de] Yes please" }, { title: "[de] No thanks" }],
    });
    expect(polled.media_attachments).toEqual([]);
    expect(
      calls.every((c) => c.model === "@cf/meta/m2m100-1.2b" && c.source_lang === "en" && c.target_lang === "de"),
    ).toBe(true);
    // No call was given markup, a link's text or a shortcode.
    expect(calls.some((c) => /[<>]|@|#cats|https:|:blobcat:/.test(c.text))).toBe(false);
    const asked = calls.length;
    const [{ neurons }] = (await rows("SELECT neurons FROM translation_days")) as { neurons: number }[];
    expect(neurons).toBeGreaterThan(0);

    // Asked again, by anyone: from the store, no model, no neurons.
    const again = valid(TranslationSchema, await translate(author, s.id, vars));
    expect(again).toEqual(t);
    expect(calls.length).toBe(asked);
    expect(await rows("SELECT neurons FROM translation_days")).toEqual([{ neurons }]);

    // Akkoma's route, from the same store.
    const akkoma = valid(
      AkkomaTranslationSchema,
      await json(`/api/v1/statuses/${s.id}/translations/de`, { token: reader.token, vars }),
    );
    expect(akkoma).toEqual({ detected_language: "en", text: t.content });
    expect(calls.length).toBe(asked);

    // An edit makes a new version: translated again, the old one dropped.
    await json(`/api/v1/statuses/${s.id}`, {
      method: "PUT",
      token: author.token,
      body: { status: "Edited words", language: "en" },
    });
    const edited = valid(TranslationSchema, await translate(reader, s.id, vars));
    expect(edited.content).toContain("[de] Edited words");
    expect(calls.length).toBeGreaterThan(asked);
    expect(await rows("SELECT count(*) AS n FROM status_translations WHERE status_id = ?", s.id)).toEqual([{ n: 1 }]);

    // Gone with the status.
    await json(`/api/v1/statuses/${s.id}`, { method: "DELETE", token: author.token });
    expect(await rows("SELECT count(*) AS n FROM status_translations WHERE status_id = ?", s.id)).toEqual([{ n: 0 }]);
  });

  it("costs a few rows, and its neurons are counted by the meter; a stored translation costs no neurons and writes nothing", async () => {
    const [author, reader] = await Promise.all([registerUser(), registerUser()]);
    const { ai } = fakeAi();
    const vars = withAi(ai);
    const text = "The quick brown fox jumps over the lazy dog, and then it runs into the woods. ".repeat(6);
    const s = await post(author, { status: text, language: "en" });
    const first = await measure(() => translate(reader, s.id, vars));
    // ~480 characters each way: about 160 tokens each way at 3 bytes a token, 31,050 neurons a million.
    expect(first.usage.aiNeurons).toBe(neuronsFor([text.trim()]) + neuronsFor([`[de] ${text.trim()}`]));
    expect(first.usage.aiNeurons).toBeGreaterThan(5);
    expect(first.usage.aiNeurons).toBeLessThan(15);
    expect(first.usage.rowsRead).toBeLessThanOrEqual(40);
    expect(first.usage.rowsWritten).toBeLessThanOrEqual(12);
    const again = await measure(() => translate(author, s.id, vars));
    expect(again.usage.aiNeurons).toBe(0);
    expect(again.usage.rowsWritten).toBe(0);
    expect(again.usage.rowsRead).toBeLessThanOrEqual(25);
  });

  it("guesses a post's language when it has none, and answers a post already in the reader's language as it is", async () => {
    const [author, reader] = await Promise.all([registerUser(), registerUser()]);
    const { ai, calls } = fakeAi();
    const vars = withAi(ai);
    const s = await post(author, { status: "Das ist ein schöner Tag und ich gehe heute in den Park." });
    await env.DB.prepare("UPDATE statuses SET language = NULL WHERE id = ?").bind(s.id).run();
    const same = valid(TranslationSchema, await translate(reader, s.id, vars, "de-AT"));
    expect(same.detected_source_language).toBe("de");
    expect(same.content).toBe(s.content);
    expect(calls).toEqual([]);
    const en = valid(TranslationSchema, await translate(reader, s.id, vars, "en"));
    expect(en.detected_source_language).toBe("de");
    expect(calls.every((c) => c.source_lang === "de" && c.target_lang === "en")).toBe(true);
    expect(calls.length).toBeGreaterThan(0);
    // The reader's own language when none is asked for (`locale`: en).
    const byLocale = await json(`/api/v1/statuses/${s.id}/translate`, { method: "POST", token: reader.token, vars });
    expect(byLocale).toEqual(en);
  });

  it("translates only what the reader may see, and no private or direct post", async () => {
    const [author, follower, stranger] = await Promise.all([registerUser(), registerUser(), registerUser()]);
    const { ai, calls } = fakeAi();
    const vars = withAi(ai);
    await json(`/api/v1/accounts/${author.id}/follow`, { method: "POST", token: follower.token });
    const priv = await post(author, { status: "Only my followers", visibility: "private", language: "en" });
    const direct = await post(author, {
      status: `@${follower.username} just you`,
      visibility: "direct",
      language: "en",
    });
    expect((await translate(stranger, priv.id, vars, "de", 404)).error).toBeTruthy();
    expect((await translate(follower, priv.id, vars, "de", 403)).error).toMatch(/cannot be translated/);
    expect((await translate(stranger, direct.id, vars, "de", 404)).error).toBeTruthy();
    expect((await translate(follower, direct.id, vars, "de", 403)).error).toBeTruthy();
    expect(
      await json(`/api/v1/statuses/${priv.id}/translations/de`, { token: stranger.token, vars, status: 404 }),
    ).toHaveProperty("error");
    expect(calls).toEqual([]);
    // A token without read access, and no token: refused.
    const pub = await post(author, { status: "Public words", language: "en" });
    expect((await call(`/api/v1/statuses/${pub.id}/translate`, { method: "POST", vars })).status).toBe(403);
    const writeOnly = await scopedToken(stranger, "write");
    const scoped = await call(`/api/v1/statuses/${pub.id}/translate`, { method: "POST", token: writeOnly, vars });
    expect(scoped.status).toBe(403);
    expect((await translate(stranger, "nope", vars, "de", 404)).error).toBeTruthy();
    expect((await translate(stranger, pub.id, vars, "!!", 422)).error).toMatch(/language/);
  });

  it("holds the day's neuron budget and each user's share, and says when the model fails", async () => {
    const [author, reader] = await Promise.all([registerUser(), registerUser()]);
    const { ai } = fakeAi();
    const a = await post(author, { status: "First post to translate", language: "en" });
    const b = await post(author, { status: "Second post to translate", language: "en" });
    const broke = await translate(reader, a.id, withAi(ai, { TRANSLATION_DAILY_NEURONS: "0" }), "de", 503);
    expect(broke.error).toMatch(/budget/);
    const limited = withAi(ai, { TRANSLATIONS_PER_USER: "1" });
    await translate(reader, a.id, limited);
    await translate(reader, a.id, limited); // from the store: not counted
    const res = await call(`/api/v1/statuses/${b.id}/translate`, {
      method: "POST",
      token: reader.token,
      body: { lang: "de" },
      vars: limited,
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    const down = fakeAi(true);
    expect((await translate(author, b.id, withAi(down.ai), "fr", 503)).error).toMatch(/unavailable/);
    expect(await rows("SELECT count(*) AS n FROM status_translations WHERE status_id = ?", b.id)).toEqual([{ n: 0 }]);
    const long = await post(author, {
      status: Array.from({ length: MAX_UNITS + 1 }, (_, i) => `word${i} #t${i}`).join(" "),
      language: "en",
    });
    expect((await translate(author, long.id, withAi(ai), "de", 422)).error).toMatch(/too long/);
  });
});

describe("the run-time switch and the language guess", () => {
  it("an admin turns translation off and on in the settings (Pleroma's ConfigDB)", async () => {
    const [admin, reader] = await Promise.all([
      registerUser({ scopes: "read write follow push admin:read admin:write" }),
      registerUser(),
    ]);
    await makeAdmin(admin.id);
    const { ai } = fakeAi();
    const vars = withAi(ai);
    const set = (on: boolean) =>
      json("/api/v1/pleroma/admin/config", {
        method: "POST",
        token: admin.token,
        body: { configs: [{ group: ":pleroma", key: ":instance", value: [{ tuple: [":translation_enabled", on] }] }] },
      });
    const s = await post(admin, { status: "Switch me", language: "en" });
    await set(false);
    try {
      expect(valid(InstanceV2Schema, await json("/api/v2/instance", { vars })).configuration.translation.enabled).toBe(
        false,
      );
      await translate(reader, s.id, vars, "de", 404);
    } finally {
      await set(true);
    }
    expect(valid(InstanceV2Schema, await json("/api/v2/instance", { vars })).configuration.translation.enabled).toBe(
      true,
    );
    await translate(reader, s.id, vars, "de");
    // The admins' dashboard figures carry the day's neurons against the budget.
    const stats = await json("/api/v1/pleroma/admin/stats", { token: admin.token, vars });
    expect(stats.translation.daily_neurons).toBe(10_000);
    expect(stats.translation.neurons_today).toBeGreaterThan(0);
  });

  it("tells scripts outright and Latin-script languages by their function words", () => {
    const cases: [string, string | null][] = [
      ["This is a nice day and I am going for a walk.", "en"],
      ["Das ist ein schöner Tag und ich gehe heute in den Park.", "de"],
      ["Aujourd'hui il fait beau, je vais me promener dans le parc.", "fr"],
      ["Hola amigos, hoy vamos a la playa con los niños.", "es"],
      ["Bom dia, hoje não vamos para a praia com você.", "pt"],
      ["今日はいい天気ですね。", "ja"],
      ["오늘 날씨가 좋네요", "ko"],
      ["今天天气很好", "zh"],
      ["Сегодня хорошая погода", "ru"],
      ["Сьогодні гарна погода, їдемо", "uk"],
      ["Καλημέρα σε όλους", "el"],
      ["ok", null],
      ["#tag @who 123", null],
    ];
    for (const [text, lang] of cases) expect([text, detectLanguage(text)]).toEqual([text, lang]);
  });
});

describe("with a LibreTranslate server", () => {
  function libre() {
    const asked: { url: string; body: any }[] = [];
    const inner = globalThis.fetch;
    globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const req = new Request(input, init);
      if (!req.url.startsWith("http://127.0.0.1:5000/")) return inner(input, init);
      const body = (req.method === "POST" ? await req.json() : null) as { q: string[]; source: string } | null;
      asked.push({ url: req.url, body });
      if (req.url.endsWith("/languages"))
        return Response.json([
          { code: "en", name: "English", targets: ["de", "en", "fr"] },
          { code: "de", name: "German", targets: ["en", "fr"] },
        ]);
      return Response.json({
        translatedText: body!.q.map((q) => `«${q}»`),
        detectedLanguage: body!.source === "auto" ? [{ confidence: 90, language: "en" }] : undefined,
      });
    }) as typeof fetch;
    restore = () => (globalThis.fetch = inner);
    return asked;
  }
  const vars = {
    LIBRE_TRANSLATE_ENDPOINT: "http://127.0.0.1:5000/",
    LIBRE_TRANSLATE_API_KEY: "k3y",
    ALLOW_PRIVATE_ADDRESS: "true",
  };

  it("translates through it, with its languages and its own detection", async () => {
    const asked = libre();
    const [author, reader] = await Promise.all([registerUser(), registerUser()]);
    expect(await json("/api/v1/instance/translation_languages", { vars })).toEqual({
      en: ["de", "fr"],
      de: ["en", "fr"],
    });
    expect(await json("/api/v1/akkoma/translation/languages", { vars })).toEqual({
      source: [
        { code: "de", name: "de" },
        { code: "en", name: "en" },
      ],
      target: [
        { code: "de", name: "de" },
        { code: "en", name: "en" },
        { code: "fr", name: "fr" },
      ],
    });
    const spent = await rows("SELECT sum(neurons) AS n FROM translation_days");
    const s = await post(author, { status: "ok" });
    await env.DB.prepare("UPDATE statuses SET language = NULL WHERE id = ?").bind(s.id).run();
    const t = valid(TranslationSchema, await translate(reader, s.id, vars, "fr"));
    expect(t.provider).toBe("LibreTranslate");
    expect(t.detected_source_language).toBe("en");
    expect(t.content).toContain("«ok»");
    const call1 = asked.find((a) => a.url.endsWith("/translate"))!;
    expect(call1.body).toMatchObject({ q: ["ok"], source: "auto", target: "fr", format: "text", api_key: "k3y" });
    // A LibreTranslate server spends no neurons.
    expect(await rows("SELECT sum(neurons) AS n FROM translation_days")).toEqual(spent);
  });

  it("reaches it only through the outbound guard", async () => {
    libre();
    const [author, reader] = await Promise.all([registerUser(), registerUser()]);
    const s = await post(author, { status: "Guarded words", language: "en" });
    const res = await translate(reader, s.id, { ...vars, ALLOW_PRIVATE_ADDRESS: "false" }, "de", 503);
    expect(res.error).toMatch(/unavailable/);
  });
});
