/**
 * The capability ladder (issue 45, src/lib/compatibility.ts): each app's gate, read from the instance documents
 * the way its source reads them, and every endpoint the claimed level opens for that app called: none may answer
 * 404. The readers, from the apps' sources:
 * - Soapbox (soapbox-pub/soapbox src/utils/features.ts `parseVersion`): `^([\w+.-]*)(?: \(compatible; ([\w]*) (.*)\))?$`,
 *   the third group (or the first) and the first each parsed as strict semver (`@std/semver` throws otherwise and
 *   the app never mounts); its Mastodon-version gates apply only when the software is Mastodon; `features`
 *   from `pleroma.metadata.features` (`v2_suggestions`).
 * - Ice Cubes (Dimillian/IceCubesApp Packages/Env/Sources/Env/CurrentInstance.swift): `Float(version.prefix(3))`:
 *   Edit ≥ 3.5, filters ≥ 4, alt-text edit ≥ 4.1, grouped notifications, notification filtering and the link
 *   timeline ≥ 4.3; quotes `apiVersions.mastodon` ≥ 7.
 * - Phanpy (cheeaun/phanpy src/utils/supports.js, src/pages/notifications.jsx, filters.jsx): `api_versions.mastodon`
 *   ≥ 2 grouped notifications, ≥ 5 the blur filter; its semver feature ranges apply only when nodeinfo names
 *   Mastodon.
 * - Elk (elk-zone/elk): no version gates; it calls v2 instance, search, suggestions and the trends.
 * - Tusky/Pachli and megalodon: nodeinfo's software name (`pleroma`) and its version read as semver.
 * - Pleroma-FE: nodeinfo's `metadata.features`.
 */
import { describe, expect, it, beforeAll } from "vitest";
import { CLAIMED, FEATURES, LEVELS, type App, type Level } from "../src/lib/compatibility";
import { VERSION } from "../src/env";
import { InstanceSchema, InstanceV2Schema, NodeinfoSchema } from "../src/schemas/instance";
import { call, json, makeAdmin, post, registerUser, valid, type TestUser } from "./helpers";

// ---- the readers ----

const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;
const semver = (s: string) => {
  const m = SEMVER.exec(s);
  return m ? { version: `${m[1]}.${m[2]}.${m[3]}`, build: m[5]?.split(".") ?? [] } : null;
};
const compare = (a: string, b: string) => {
  const [x, y] = [a.split(".").map(Number), b.split(".").map(Number)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
};

/** Soapbox's `parseVersion`: null where its semver parse would throw (the blank page of issue 45). */
function soapbox(version: string) {
  const match = /^([\w+.-]*)(?: \(compatible; ([\w]*) (.*)\))?$/.exec(version);
  if (!match) return null;
  const v = semver(match[3] || match[1]!);
  const compat = semver(match[1]!);
  if (!v || !compat) return null;
  return { build: v.build[0], compatVersion: compat.version, software: match[2] || "Mastodon", version: v.version };
}

/** Ice Cubes' `version`: the float of the first three characters. */
const iceCubes = (version: string) => Number(version.length > 2 ? version.slice(0, 3) : version.slice(0, 1)) || 0;

interface Docs {
  v1: { version: string; pleroma: { metadata: { features: string[] } } };
  v2: { version: string; api_versions: { mastodon: number } };
  nodeinfo: { software: { name: string; version: string }; metadata: { features: string[] } };
}

/** The levels each app acts on, given the documents, as its source decides. */
function opened(app: App, docs: Docs): Level[] {
  const [base] = LEVELS;
  switch (app) {
    case "iceCubes": {
      const v = iceCubes(docs.v2.version);
      return LEVELS.filter((l) => v >= Number(l.version.slice(0, 3)));
    }
    case "phanpy":
      // Its semver ranges need nodeinfo to say Mastodon; `api_versions` gates whatever the software.
      if (docs.nodeinfo.software.name === "mastodon") throw new Error("Phanpy would read the version too");
      return LEVELS.filter((l) => l.api <= (docs.v2.api_versions?.mastodon ?? 0));
    case "soapbox": {
      const v = soapbox(docs.v1.version);
      if (!v) throw new Error(`Soapbox cannot parse ${docs.v1.version}`);
      // Its Mastodon gates (compatVersion) apply to Mastodon only: as Pleroma it opens nothing by level.
      if (v.software === "Mastodon") throw new Error("Soapbox would read the Mastodon version");
      return [base!];
    }
    case "elk":
    case "tusky":
    case "pleromaFe":
      return [base!];
  }
}

// ---- calling ----

interface Fixture {
  admin: TestUser;
  ids: Record<string, string>;
}

/**
 * Bodies the apps send with their writes (a realistic request; only the answer's status is judged). A value
 * `:name` is the fixture's id of that name.
 */
const BODIES: Record<string, Record<string, unknown>> = {
  "PUT /api/v1/statuses/:status_id": { status: "edited by the ladder test" },
  "POST /api/v1/statuses": { status: "quoting", quoted_status_id: ":status_id", quote_approval_policy: "public" },
  "PUT /api/v1/statuses/:status_id/interaction_policy": { quote_approval_policy: "followers" },
  "POST /api/v2/filters": { title: "ladder", context: ["home"], keywords_attributes: [{ keyword: "ladder" }] },
  "PUT /api/v2/filters/:filter_id": { title: "ladder2", context: ["home", "thread"] },
  "POST /api/v2/filters/:filter_id/keywords": { keyword: "ladder3", whole_word: true },
  "PATCH /api/v2/notifications/policy": { for_not_following: "accept" },
  "POST /api/v1/notifications/requests/accept": { id: ["0"] },
  "POST /api/v1/notifications/requests/dismiss": { id: ["0"] },
};

async function callEndpoint(f: Fixture, endpoint: string) {
  const [method, template] = endpoint.split(" ") as [string, string];
  const path = template.replace(/:([a-z_]+)/g, (_, name: string) => {
    const id = f.ids[name];
    if (!id) throw new Error(`no fixture for :${name} (${endpoint})`);
    return encodeURIComponent(id);
  });
  const template_ = BODIES[endpoint];
  const body =
    template_ &&
    Object.fromEntries(
      Object.entries(template_).map(([k, v]) => [
        k,
        typeof v === "string" && v.startsWith(":") ? f.ids[v.slice(1)] : v,
      ]),
    );
  const res = await call(path, { method, token: f.admin.token, ...(body ? { body } : {}) });
  return { status: res.status, text: await res.text() };
}

async function expectServed(f: Fixture, who: string, endpoint: string) {
  const r = await callEndpoint(f, endpoint);
  expect(r.status, `${who}: ${endpoint} -> ${r.status} ${r.text.slice(0, 200)}`).not.toBe(404);
  expect(r.status, `${who}: ${endpoint} -> ${r.status} ${r.text.slice(0, 200)}`).not.toBe(405);
  expect(r.status, `${who}: ${endpoint} -> ${r.status} ${r.text.slice(0, 200)}`).toBeLessThan(500);
}

let docs: Docs;
let fixture: Fixture;

beforeAll(async () => {
  const admin = await registerUser({ scopes: "read write follow push admin" });
  await makeAdmin(admin.id);
  const other = await registerUser();
  const status = await post(admin, { status: "a post the apps edit" });
  const poll = await post(admin, { status: "a poll", poll: { options: ["a", "b"], expires_in: 3600 } });
  const filter = await json("/api/v2/filters", {
    token: admin.token,
    body: { title: "fixture", context: ["home"], keywords_attributes: [{ keyword: "fixture" }] },
  });
  // Notifications to group, for the levels with grouped notifications: one group to read, one to dismiss.
  const dismissed = await post(admin, { status: "a post whose favourites' group is dismissed" });
  await json(`/api/v1/statuses/${dismissed.id}/favourite`, { method: "POST", token: other.token });
  await json(`/api/v1/statuses/${status.id}/favourite`, { method: "POST", token: other.token });
  const grouped = await call("/api/v2/notifications", { token: admin.token });
  const groups =
    grouped.status === 200 ? ((await grouped.json()) as { notification_groups?: { group_key: string }[] }) : {};
  const requests = await call("/api/v1/notifications/requests", { token: admin.token });
  const request = requests.status === 200 ? ((await requests.json()) as { id: string }[])[0] : undefined;
  fixture = {
    admin,
    ids: {
      account_id: other.id,
      status_id: status.id,
      poll_id: poll.poll.id,
      filter_id: filter.id,
      keyword_id: filter.keywords[0].id,
      group_key: groups.notification_groups?.[0]?.group_key ?? "ungrouped-0",
      dismissed_group_key: groups.notification_groups?.[1]?.group_key ?? "ungrouped-0",
      request_id: request?.id ?? "0",
    },
  };
  docs = {
    v1: valid(InstanceSchema, await json("/api/v1/instance")),
    v2: valid(InstanceV2Schema, await json("/api/v2/instance")),
    nodeinfo: valid(NodeinfoSchema, await json("/nodeinfo/2.0.json")),
  } as unknown as Docs;
});

describe("what the instance says it is", () => {
  it("begins `version` with the claimed level and Pleroma's marker, Starling's version as semver build metadata", () => {
    const expected = `${CLAIMED.version} (compatible; Pleroma 2.5.0+starling.${VERSION})`;
    expect(docs.v1.version).toBe(expected);
    expect(docs.v2.version).toBe(expected);
    expect(docs.v2.api_versions).toEqual({ mastodon: CLAIMED.api });
  });

  it("parses in Soapbox's reader as Pleroma 2.5.0 (the old `; Starling` suffix did not: a blank page)", () => {
    expect(soapbox(docs.v1.version)).toEqual({
      build: "starling",
      compatVersion: CLAIMED.version,
      software: "Pleroma",
      version: "2.5.0",
    });
    expect(soapbox("2.7.2 (compatible; Pleroma 2.5.0; Starling 0.1.0)")).toBeNull();
    // Pleroma's own strings parse too (the reader is Soapbox's, not one made to pass).
    expect(soapbox("2.7.2 (compatible; Pleroma 2.5.0)")?.software).toBe("Pleroma");
  });

  it("reads as the claimed level in Ice Cubes' float and Phanpy's api_versions", () => {
    expect(iceCubes(docs.v2.version)).toBe(Number(CLAIMED.version.slice(0, 3)));
    expect(iceCubes("2.7.2 (compatible; Pleroma 2.5.0; Starling 0.1.0)")).toBe(2.7);
    expect(docs.v2.api_versions.mastodon).toBe(CLAIMED.api);
  });

  it("keeps nodeinfo's software `pleroma` (Tusky, Pachli, megalodon, Phanpy) with a semver version and the features", () => {
    expect(docs.nodeinfo.software.name).toBe("pleroma");
    expect(semver(docs.nodeinfo.software.version)).toEqual({
      version: "2.5.0",
      build: ["starling", ...VERSION.split(".")],
    });
    expect(docs.nodeinfo.metadata.features).toEqual(Object.keys(FEATURES));
    expect(docs.v1.pleroma.metadata.features).toEqual(Object.keys(FEATURES));
  });
});

describe("every endpoint an app opens is served", () => {
  const apps: App[] = ["iceCubes", "phanpy", "elk", "soapbox", "tusky", "pleromaFe"];

  it("opens, per app, exactly the levels up to the claim (where the app gates on the level)", () => {
    const upTo = LEVELS.filter((l) => compare(l.version, CLAIMED.version) <= 0);
    expect(opened("iceCubes", docs)).toEqual(upTo);
    expect(opened("phanpy", docs)).toEqual(LEVELS.filter((l) => l.api <= CLAIMED.api));
    expect(opened("phanpy", docs).every((l) => compare(l.version, CLAIMED.version) <= 0)).toBe(true);
    expect(opened("soapbox", docs)).toEqual([LEVELS[0]]);
  });

  for (const app of apps) {
    it(`${app}: no endpoint of the levels it opens answers 404`, async () => {
      const levels = opened(app, docs);
      expect(levels.length).toBeGreaterThan(0);
      for (const level of levels) for (const e of level.calls[app] ?? []) await expectServed(fixture, app, e);
    });
  }

  it("Pleroma-FE and Soapbox: no endpoint of a listed nodeinfo feature answers 404", async () => {
    for (const feature of docs.nodeinfo.metadata.features)
      for (const e of FEATURES[feature] ?? []) await expectServed(fixture, feature, e);
    // Soapbox's v2 suggestions (`v2_suggestions`): Mastodon's shape over v1's list, which suggests nobody.
    expect(await json("/api/v2/suggestions?limit=20")).toEqual([]);
    expect(await json("/api/v2/suggestions", { token: fixture.admin.token })).toEqual([]);
  });

  it("claims the highest level: the next one up still has an endpoint not served (raise CLAIMED when it has none)", async () => {
    const next = LEVELS.find((l) => compare(l.version, CLAIMED.version) > 0);
    if (!next) return;
    const statuses: number[] = [];
    for (const e of Object.values(next.calls).flat()) statuses.push((await callEndpoint(fixture, e)).status);
    expect(statuses).toContain(404);
  });
});
