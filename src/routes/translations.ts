/** Translation (issue 47): Mastodon's translate and language list, Akkoma's twins (services/translation.ts). */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { route } from "../http/route";
import { optionalString } from "../http/params";
import { renderAkkomaLanguages, renderAkkomaTranslation, renderTranslation } from "../render/translation";
import { AkkomaTranslationLanguagesSchema, AkkomaTranslationSchema, TranslationSchema } from "../schemas/status";
import { targetLanguage, translateStatus, translationEnabled, translationLanguages } from "../services/translation";

export function registerTranslationRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "post",
    path: "/api/v1/statuses/:id/translate",
    summary: "Translate a status into a language (the reader's by default)",
    tags: ["Statuses"],
    auth: "user",
    scopes: ["read:statuses"],
    params: z.object({ id: z.string(), lang: optionalString() }),
    response: TranslationSchema,
    handler: async (c, p, auth) => {
      const target = targetLanguage(p.lang, auth.user.locale);
      return c.json(renderTranslation(await translateStatus(c.env, db(c.env), p.id, auth.account.id, target)));
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/statuses/:id/translations/:language",
    summary: "Translate a status into a language (Akkoma's route)",
    tags: ["Statuses"],
    auth: "user",
    scopes: ["read:statuses"],
    params: z.object({ id: z.string(), language: z.string() }),
    response: AkkomaTranslationSchema,
    handler: async (c, p, auth) => {
      const target = targetLanguage(p.language, auth.user.locale);
      return c.json(renderAkkomaTranslation(await translateStatus(c.env, db(c.env), p.id, auth.account.id, target)));
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/instance/translation_languages",
    summary: "The languages statuses can be translated from, each with those it can be translated into",
    tags: ["Instance"],
    auth: "none",
    response: z.record(z.string(), z.array(z.string())),
    handler: async (c) => c.json(await translationLanguages(c.env)),
  });

  route(app, {
    method: "get",
    path: "/api/v1/akkoma/translation/languages",
    summary: "The languages statuses can be translated from and into (Akkoma's route; {} without translation)",
    tags: ["Instance"],
    auth: "none",
    response: AkkomaTranslationLanguagesSchema,
    handler: async (c) =>
      c.json(translationEnabled(c.env) ? renderAkkomaLanguages(await translationLanguages(c.env)) : {}),
  });
}
