/**
 * RFC 8414 authorization server metadata. Clients (Phanpy) read `code_challenge_methods_supported` to decide
 * whether to use PKCE; without this document they fall back to the plain code flow.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { route } from "../http/route";
import { baseUrl } from "../http/urls";
import { OAuthServerMetadataSchema } from "../schemas/oauth";

const GRANULAR = {
  read: [
    "accounts",
    "blocks",
    "bookmarks",
    "favourites",
    "filters",
    "follows",
    "lists",
    "mutes",
    "notifications",
    "search",
    "statuses",
  ],
  write: [
    "accounts",
    "blocks",
    "bookmarks",
    "conversations",
    "favourites",
    "filters",
    "follows",
    "lists",
    "media",
    "mutes",
    "notifications",
    "reports",
    "statuses",
  ],
};

const SCOPES_SUPPORTED = [
  "read",
  "write",
  "follow",
  "push",
  ...GRANULAR.read.map((s) => `read:${s}`),
  ...GRANULAR.write.map((s) => `write:${s}`),
];

export function registerOAuthMetadataRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/.well-known/oauth-authorization-server",
    summary: "OAuth 2 authorization server metadata (RFC 8414)",
    tags: ["OAuth"],
    auth: "none",
    response: OAuthServerMetadataSchema,
    handler: (c) => {
      const base = baseUrl(c);
      return c.json({
        issuer: base,
        authorization_endpoint: `${base}/oauth/authorize`,
        token_endpoint: `${base}/oauth/token`,
        revocation_endpoint: `${base}/oauth/revoke`,
        app_registration_endpoint: `${base}/api/v1/apps`,
        scopes_supported: SCOPES_SUPPORTED,
        response_types_supported: ["code"],
        response_modes_supported: ["query"],
        grant_types_supported: ["authorization_code", "password", "client_credentials", "refresh_token"],
        token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
        // `plain` still works for old clients; advertised is the method clients should use.
        code_challenge_methods_supported: ["S256"],
        service_documentation: `${base}/api/openapi`,
      });
    },
  });
}
