/** OAuth client applications. */
import { eq } from "drizzle-orm";
import type { DB } from "../db/client";
import { now } from "../db/client";
import { newId } from "../db/ids";
import { apps } from "../db/schema";
import { randomToken, safeEqual, sha256 } from "../lib/crypto";
import { badRequest, unprocessable } from "../lib/errors";
import { invalidScopes } from "./scopes";

export type AppRow = typeof apps.$inferSelect;

export const OOB_URI = "urn:ietf:wg:oauth:2.0:oob";

export function redirectUriList(app: Pick<AppRow, "redirectUris">): string[] {
  return app.redirectUris
    .split(/\r?\n/)
    .map((s) => s.trim())
    .filter(Boolean);
}

function validRedirectUri(uri: string): boolean {
  if (uri === OOB_URI) return true;
  try {
    const url = new URL(uri);
    // Native apps register custom schemes (e.g. `tusky://oauth`); refuse only script-like ones.
    return !["javascript:", "data:", "vbscript:"].includes(url.protocol);
  } catch {
    return false;
  }
}

export async function createApp(
  d: DB,
  input: { name: string; redirectUris: string; scopes: string[]; website?: string | null },
): Promise<{ app: AppRow; clientSecret: string }> {
  const uris = input.redirectUris
    .split(/\r?\n/)
    .map((s) => s.trim())
    .filter(Boolean);
  if (uris.length === 0) throw unprocessable("redirect_uris can't be blank");
  const bad = uris.find((u) => !validRedirectUri(u));
  if (bad) throw unprocessable(`Invalid redirect URI: ${bad}`);
  const wrong = invalidScopes(input.scopes);
  if (wrong.length) throw badRequest(`Invalid scopes: ${wrong.join(" ")}`);
  const clientSecret = randomToken(32);
  const app: AppRow = {
    id: newId(),
    name: input.name,
    website: input.website || null,
    redirectUris: uris.join("\n"),
    scopes: (input.scopes.length ? input.scopes : ["read"]).join(" "),
    clientId: randomToken(32),
    clientSecretHash: await sha256(clientSecret),
    createdAt: now(),
  };
  await d.insert(apps).values(app);
  return { app, clientSecret };
}

export async function findAppByClientId(d: DB, clientId: string): Promise<AppRow | undefined> {
  return d.select().from(apps).where(eq(apps.clientId, clientId)).get();
}

/** The app whose id and secret both match, or undefined. */
export async function authenticateClient(d: DB, clientId: string | undefined, clientSecret: string | undefined) {
  if (!clientId || !clientSecret) return undefined;
  const app = await findAppByClientId(d, clientId);
  if (!app) return undefined;
  return safeEqual(await sha256(clientSecret), app.clientSecretHash) ? app : undefined;
}
