/** Client-API steps benches share: a user registered as a client would (app, app token, sign-up), its token. */
export async function registerUser(base: string, username: string): Promise<string> {
  const post = async (path: string, body: unknown, token?: string) => {
    const res = await fetch(`${base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`POST ${path} (${username}): ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, string>;
  };
  const app = await post("/api/v1/apps", {
    client_name: "bench",
    redirect_uris: "urn:ietf:wg:oauth:2.0:oob",
    scopes: "read write",
  });
  const appToken = await post("/oauth/token", {
    grant_type: "client_credentials",
    client_id: app.client_id,
    client_secret: app.client_secret,
    scope: "read write",
  });
  const user = await post(
    "/api/v1/accounts",
    { username, email: `${username}@example.com`, password: "correct horse battery", agreement: true, locale: "en" },
    appToken.access_token,
  );
  return user.access_token!;
}
