/** App and Token entities. */
import type { AppRow } from "../services/apps";
import type { IssuedToken } from "../services/tokens";
import type { App, OAuthTokenEntry, Token } from "../schemas/oauth";

export function renderApp(app: AppRow, clientSecret: string, vapidKey: string): App {
  return {
    id: app.id,
    name: app.name,
    website: app.website,
    redirect_uri: app.redirectUris,
    client_id: app.clientId,
    client_secret: clientSecret,
    vapid_key: vapidKey,
  };
}

/** The token answer; `me` (the user's ActivityPub id) only for user tokens. */
export function renderToken(issued: IssuedToken, me: string | null): Token {
  const t = issued.row;
  return {
    id: t.id,
    token_type: "Bearer",
    access_token: issued.accessToken,
    refresh_token: issued.refreshToken,
    expires_in: Math.floor((t.expiresAt - t.createdAt) / 1000),
    scope: t.scopes,
    created_at: Math.floor(t.createdAt / 1000),
    ...(me ? { me } : {}),
  };
}

/** Tokens without an app are sessions of the sign-in page. */
const SESSION_APP_NAME = "Browser session";

/** One entry of Pleroma's token management list. */
export function renderTokenEntry(t: { id: string; expiresAt: number; appName: string | null }): OAuthTokenEntry {
  return { id: t.id, app_name: t.appName ?? SESSION_APP_NAME, valid_until: new Date(t.expiresAt).toISOString() };
}
