import { describe, expect, it } from "vitest";
import { AccountSchema } from "../src/schemas/account";
import { StatusSchema } from "../src/schemas/status";
import { json, post, registerUser, valid } from "./helpers";

describe("search", () => {
  it("finds statuses by words, only those the viewer may see; unlisted counts as public", async () => {
    const [a, b, viewer] = [await registerUser(), await registerUser(), await registerUser()];
    const word = `zebra${Date.now()}`;
    const pub = await post(a, { status: `A ${word} crossing` });
    const unl = await post(a, { status: `An unlisted ${word}`, visibility: "unlisted" });
    const priv = await post(a, { status: `Private ${word}`, visibility: "private" });
    const dm = await post(a, { status: `Secret ${word} @${b.username}`, visibility: "direct" });
    const other = await post(a, { status: "nothing to see" });
    const r = await json(`/api/v2/search?q=${word}&type=statuses`, { token: viewer.token });
    r.statuses.forEach((s: unknown) => valid(StatusSchema, s));
    expect(r.statuses.map((s: any) => s.id)).toEqual([unl.id, pub.id]);
    expect(
      (await json(`/api/v2/search?q=${word}&type=statuses`, { token: b.token })).statuses.map((s: any) => s.id),
    ).toEqual([dm.id, unl.id, pub.id]);
    expect(
      (await json(`/api/v2/search?q=${word}&type=statuses`, { token: a.token })).statuses.map((s: any) => s.id),
    ).toEqual([dm.id, priv.id, unl.id, pub.id]);
    expect(
      (await json(`/api/v2/search?q=${word.slice(0, 8)}%20crossing&type=statuses`)).statuses.map((s: any) => s.id),
    ).toContain(pub.id);
    expect((await json(`/api/v2/search?q=${word}`)).statuses.map((s: any) => s.id)).not.toContain(other.id);
    // Deleted statuses leave the index.
    await json(`/api/v1/statuses/${pub.id}`, { method: "DELETE", token: a.token });
    expect((await json(`/api/v2/search?q=${word}&type=statuses`)).statuses.map((s: any) => s.id)).toEqual([unl.id]);
    // Muted and blocked authors are left out.
    await json(`/api/v1/accounts/${a.id}/mute`, { method: "POST", token: viewer.token });
    expect((await json(`/api/v2/search?q=${word}&type=statuses`, { token: viewer.token })).statuses).toEqual([]);
  });

  it("finds accounts by acct prefix and display name, and hashtags by prefix", async () => {
    const stamp = Date.now().toString(36);
    const alice = await registerUser({ username: `alice${stamp}` });
    const alison = await registerUser({ username: `alison${stamp}` });
    await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: alison.token,
      body: { display_name: `Wonder ${stamp}` },
    });
    const found = await json(`/api/v1/accounts/search?q=ali`);
    expect(found.map((x: any) => x.id)).toEqual(expect.arrayContaining([alice.id, alison.id]));
    found.forEach((x: unknown) => valid(AccountSchema, x));
    expect((await json(`/api/v1/accounts/search?q=@alice${stamp}@localhost`))[0].id).toBe(alice.id);
    expect((await json(`/api/v1/accounts/search?q=wonder ${stamp}`)).map((x: any) => x.id)).toEqual([alison.id]);
    // following=true keeps only the accounts the viewer follows.
    await json(`/api/v1/accounts/${alice.id}/follow`, { method: "POST", token: alison.token });
    expect(
      (await json(`/api/v1/accounts/search?q=ali&following=true`, { token: alison.token })).map((x: any) => x.id),
    ).toEqual([alice.id]);
    // Pleroma-FE's list editor repeats the parameter (`following=true&following=accounts`): taken as Pleroma does.
    const listEditor = await json(
      `/api/v2/search?q=ali&resolve=false&limit=20&following=true&following=accounts&type=accounts`,
      { token: alison.token },
    );
    expect(listEditor.accounts.map((x: any) => x.id)).toEqual([alice.id]);
    // Blocked either way: not found.
    await json(`/api/v1/accounts/${alison.id}/block`, { method: "POST", token: alice.token });
    expect(
      (await json(`/api/v1/accounts/search?q=ali${"son"}${stamp}`, { token: alice.token })).map((x: any) => x.id),
    ).toEqual([]);

    const tag = `tag${stamp}`;
    await post(alice, { status: `#${tag} #${tag}b` });
    await post(alice, { status: `#${tag}` });
    const v2 = await json(`/api/v2/search?q=%23${tag}&type=hashtags`);
    expect(v2.hashtags.map((t: any) => t.name)).toEqual([tag, `${tag}b`]);
    expect(v2.hashtags[0].url).toBe(`http://localhost/tag/${tag}`);
    expect((await json(`/api/v1/search?q=${tag}`)).hashtags).toEqual([tag, `${tag}b`]);
  });

  it("answers 400 without a query, but an account search with a blank one finds nobody", async () => {
    await json("/api/v2/search", { status: 400 });
    // Soapbox's chat screen asks `q=` as it opens: an empty list, not an error (issue 45).
    expect(await json("/api/v1/accounts/search?q=")).toEqual([]);
    expect(await json("/api/v1/accounts/search?q=%20%20")).toEqual([]);
    expect(await json("/api/v1/accounts/search")).toEqual([]);
  });
});
