import { z } from "@hono/zod-openapi";

export const AppSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    website: z.string().nullable(),
    redirect_uri: z.string(),
    client_id: z.string(),
    client_secret: z.string(),
    vapid_key: z.string(),
  })
  .openapi("Application");

export const AppCredentialsSchema = z
  .object({ name: z.string(), website: z.string().nullable(), vapid_key: z.string() })
  .openapi("ApplicationCredentials");

export const TokenSchema = z
  .object({
    id: z.string(),
    token_type: z.literal("Bearer"),
    access_token: z.string(),
    refresh_token: z.string(),
    expires_in: z.number().int(),
    scope: z.string(),
    created_at: z.number().int(),
    me: z.string().optional(),
  })
  .openapi("Token");

/** What registration answers instead of a token when the account must be confirmed first. */
export const RegistrationPendingSchema = z.object({ message: z.string(), identifier: z.string() });

export type App = z.infer<typeof AppSchema>;
export type Token = z.infer<typeof TokenSchema>;

/** One of the user's tokens, as Pleroma's token management lists them (`/api/oauth_tokens`). */
export const OAuthTokenEntrySchema = z
  .object({ id: z.string(), app_name: z.string(), valid_until: z.string() })
  .openapi("OAuthTokenEntry");

/** RFC 8414 authorization server metadata (`/.well-known/oauth-authorization-server`). */
export const OAuthServerMetadataSchema = z
  .object({
    issuer: z.string(),
    authorization_endpoint: z.string(),
    token_endpoint: z.string(),
    revocation_endpoint: z.string(),
    app_registration_endpoint: z.string(),
    scopes_supported: z.array(z.string()),
    response_types_supported: z.array(z.string()),
    response_modes_supported: z.array(z.string()),
    grant_types_supported: z.array(z.string()),
    token_endpoint_auth_methods_supported: z.array(z.string()),
    code_challenge_methods_supported: z.array(z.string()),
    service_documentation: z.string().optional(),
  })
  .openapi("OAuthServerMetadata");
export type OAuthTokenEntry = z.infer<typeof OAuthTokenEntrySchema>;
