/** The admin API (`/api/v1/pleroma/admin/…`): Pleroma 2.5's paths and shapes, so admin-fe works. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { registerAdminChatRoutes } from "./chats";
import { registerAdminDomainRuleRoutes, registerAdminDomainSubscriptionRoutes } from "./domain-rules";
import { registerAdminFrontendRoutes } from "./frontends";
import { registerAdminModerationRoutes } from "./moderation";
import { registerMastodonAdminRoutes } from "./mastodon";
import { registerAdminPanelRoutes } from "./panel";
import { registerAdminUserRoutes } from "./users";

export function registerAdminRoutes(app: OpenAPIHono<AppEnv>) {
  // Fixed paths (`/users/invites`, `/users/tag`…) are declared before `/users/:nickname`.
  registerAdminModerationRoutes(app);
  registerAdminUserRoutes(app);
  registerAdminFrontendRoutes(app);
  registerAdminPanelRoutes(app);
  registerAdminChatRoutes(app);
  registerAdminDomainRuleRoutes(app);
  registerAdminDomainSubscriptionRoutes(app);
  registerMastodonAdminRoutes(app);
}
