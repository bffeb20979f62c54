/** The hono app: middleware, error handling, route modules and the OpenAPI document. */
import { OpenAPIHono } from "@hono/zod-openapi";
import { afterware, type Ctx } from "./http/route";
import { cors } from "hono/cors";
import { VERSION } from "./env";
import type { AppEnv } from "./http/app-env";
import { errorResponse } from "./http/errors";
import { ApiError } from "./lib/errors";
import { validationError } from "./http/params";
import { ZodError } from "zod";
import { registerAccountRoutes } from "./routes/accounts";
import { registerAppRoutes } from "./routes/apps";
import { registerInstanceRoutes } from "./routes/instance";
import { registerTranslationRoutes } from "./routes/translations";
import { registerMediaRoutes } from "./routes/media";
import { registerNodeinfoRoutes } from "./routes/nodeinfo";
import { registerOAuthRoutes } from "./routes/oauth";
import { frontendRoutePageOf, registerPageRoutes } from "./routes/pages";
import { registerFrontendServing } from "./routes/frontend-serving";
import { registerSetupRoutes } from "./routes/setup";
import { registerSignUpRoutes } from "./routes/sign-up";
import { registerSignInRoutes } from "./routes/sign-in";
import { registerRemoteInteractionRoutes } from "./routes/remote-interaction";
import { registerRepliesRoutes } from "./routes/replies";
import { registerPleromaAccountRoutes } from "./routes/pleroma/accounts";
import { registerCaptchaRoutes } from "./routes/pleroma/captcha";
import { registerHealthcheckRoutes } from "./routes/pleroma/healthcheck";
import { registerDomainBlockRoutes } from "./routes/domain-blocks";
import { registerFilterRoutes, registerFilterV2Routes } from "./routes/filters";
import { registerGraphRoutes } from "./routes/graph";
import { registerListRoutes } from "./routes/lists";
import { registerImportRoutes } from "./routes/pleroma/imports";
import { registerAccountLifecycleRoutes } from "./routes/pleroma/account-lifecycle";
import { registerBackupRoutes } from "./routes/pleroma/backups";
import { registerReportRoutes } from "./routes/reports";
import { registerPollRoutes } from "./routes/polls";
import { registerScheduledRoutes } from "./routes/scheduled";
import { registerStatusRoutes } from "./routes/statuses";
import { registerQuoteRoutes } from "./routes/quotes";
import { registerTimelineRoutes } from "./routes/timelines";
import { registerSearchRoutes } from "./routes/search";
import { registerConversationRoutes } from "./routes/conversations";
import { registerNotificationRoutes } from "./routes/notifications";
import { registerNotificationGroupRoutes } from "./routes/notification-groups";
import { registerSeveredRelationshipRoutes } from "./routes/severed-relationships";
import { registerPushRoutes } from "./routes/push";
import { registerUploadRoutes } from "./routes/uploads";
import { registerStreamingRoutes } from "./routes/streaming";
import { registerAnnouncementRoutes } from "./routes/announcements";
import { registerDirectoryRoutes } from "./routes/directory";
import { registerEmojiRoutes } from "./routes/emoji";
import { registerEmojiPackRoutes } from "./routes/emoji-packs";
import { registerOAuthMetadataRoutes } from "./routes/oauth-metadata";
import { registerOAuthTokenRoutes } from "./routes/oauth-tokens";
import { registerPreferenceRoutes } from "./routes/preferences";
import { registerTagRoutes } from "./routes/tags";
import { registerBookmarkFolderRoutes } from "./routes/pleroma/bookmark-folders";
import { registerFrontendRoutes } from "./routes/pleroma/frontend";
import { registerScrobbleRoutes } from "./routes/pleroma/scrobbles";
import { registerBlueskyBridgeRoutes } from "./routes/pleroma/bluesky-bridge";
import { registerMfaRoutes } from "./routes/pleroma/mfa";
import { registerPasswordRoutes } from "./routes/pleroma/passwords";
import { registerImageRoutes } from "./routes/pleroma/images";
import { registerChatRoutes } from "./routes/chats";
import { registerAdminRoutes } from "./routes/admin";
import { registerAdminConfigRoutes } from "./routes/admin/config";
import { registerAdminRelayRoutes } from "./routes/admin/relays";
import { registerAdminAnnouncementRoutes } from "./routes/admin/announcements";
import { refreshSettings } from "./services/instance-settings";

export function createApp() {
  // `strict: false`: every route answers with or without a trailing slash (Pleroma-FE asks for `/api/v1/mutes/`).
  const app = new OpenAPIHono<AppEnv>({ strict: false });

  // Browser clients (Elk, Phanpy, Pleroma-FE on another host) call the API cross-origin with bearer tokens.
  app.use(
    "*",
    cors({
      origin: "*",
      allowMethods: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
      allowHeaders: ["Authorization", "Content-Type", "Idempotency-Key", "Accept", "X-CSRF-Token"],
      exposeHeaders: ["Link", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"],
      maxAge: 86400,
    }),
  );

  // What actions said must follow them (`after`), after the handler: src/http/route.ts `afterware`.
  app.use("*", (c, next) => afterware(c as unknown as Ctx, next));

  // Run-time settings (src/services/instance-settings.ts): a D1 read only when this isolate's copy is past its TTL.
  app.use("*", async (c, next) => {
    await refreshSettings(c.env);
    await next();
  });

  registerAppRoutes(app);
  registerOAuthRoutes(app);
  registerOAuthMetadataRoutes(app);
  registerOAuthTokenRoutes(app);
  registerMfaRoutes(app);
  registerPasswordRoutes(app);
  registerImageRoutes(app);
  // Before the account routes: `/accounts/relationships`, `/accounts/search` and `/accounts/lookup` are not
  // `/accounts/:id`.
  registerGraphRoutes(app);
  registerSearchRoutes(app);
  registerDirectoryRoutes(app);
  registerAccountRoutes(app);
  registerListRoutes(app);
  registerFilterRoutes(app);
  registerFilterV2Routes(app);
  registerPreferenceRoutes(app);
  registerTagRoutes(app);
  registerAnnouncementRoutes(app);
  registerAdminConfigRoutes(app);
  registerAdminRelayRoutes(app);
  registerAdminAnnouncementRoutes(app);
  registerBookmarkFolderRoutes(app);
  registerScrobbleRoutes(app);
  registerBlueskyBridgeRoutes(app);
  registerFrontendRoutes(app);
  registerDomainBlockRoutes(app);
  registerReportRoutes(app);
  registerAdminRoutes(app);
  registerImportRoutes(app);
  registerAccountLifecycleRoutes(app);
  registerBackupRoutes(app);
  registerStatusRoutes(app);
  registerQuoteRoutes(app);
  registerTimelineRoutes(app);
  registerConversationRoutes(app);
  registerNotificationGroupRoutes(app);
  registerSeveredRelationshipRoutes(app);
  registerNotificationRoutes(app);
  registerPushRoutes(app);
  registerUploadRoutes(app);
  registerPollRoutes(app);
  registerChatRoutes(app);
  registerScheduledRoutes(app);
  registerPleromaAccountRoutes(app);
  registerInstanceRoutes(app);
  registerTranslationRoutes(app);
  registerSetupRoutes(app);
  registerSignUpRoutes(app);
  registerSignInRoutes(app);
  registerRemoteInteractionRoutes(app);
  registerEmojiRoutes(app);
  registerEmojiPackRoutes(app);
  registerNodeinfoRoutes(app);
  registerCaptchaRoutes(app);
  registerHealthcheckRoutes(app);
  registerStreamingRoutes(app);
  registerMediaRoutes(app);
  // Public HTML pages for people: `/`, actors and statuses (federation answers servers at the same URLs).
  registerRepliesRoutes(app);
  registerPageRoutes(app);

  // The scheme every route's `security` names: OAuth 2 as Starling serves it, with every scope a route asks for.
  const scopes = new Set<string>();
  for (const def of app.openAPIRegistry.definitions)
    if (def.type === "route")
      for (const req of def.route.security ?? []) for (const s of req.OAuth2 ?? []) scopes.add(s);
  const scopeMap = Object.fromEntries([...scopes].sort().map((s) => [s, s]));
  app.openAPIRegistry.registerComponent("securitySchemes", "OAuth2", {
    type: "oauth2",
    flows: {
      authorizationCode: { authorizationUrl: "/oauth/authorize", tokenUrl: "/oauth/token", scopes: scopeMap },
      password: { tokenUrl: "/oauth/token", scopes: scopeMap },
      clientCredentials: { tokenUrl: "/oauth/token", scopes: scopeMap },
    },
  });
  app.doc31("/api/openapi", (c) => ({
    openapi: "3.1.0",
    info: {
      title: "Starling client API",
      version: VERSION,
      description: "Mastodon 2.7 and Pleroma 2.5 compatible client API",
    },
    servers: [{ url: new URL(c.req.url).origin }],
  }));

  // Last: an installed frontend's files and pages, for what nothing above answered.
  registerFrontendServing(app, frontendRoutePageOf);

  app.notFound((c) => c.json({ error: "Not found" }, 404));
  app.onError((err, c) => {
    if (err instanceof ApiError) return errorResponse(c, err);
    if (err instanceof ZodError) return errorResponse(c, validationError(err));
    console.error("unhandled error", c.req.method, new URL(c.req.url).pathname, err);
    return c.json({ error: "Internal server error" }, 500);
  });
  return app;
}
