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
