/**
 * Import rules (docs/architecture.md, "Layers"), checked by `npm test` through dependency-cruiser: a wrong
 * import fails with the rule's name. Layers, top down: entry points (index.ts, app.ts, routes/, federation/,
 * cron/, objects/) → effects (after-commit sinks: effects.ts) → render/ (rows → entities; no db/ or services/
 * at run time) → services/ (rules; one batch per action; return rows and Effects) → db/, content/, lib/,
 * schemas/, env.ts.
 * Type-only imports are not dependencies at run time and are left out (env.ts names the Durable Object classes
 * its bindings hold).
 */
const TYPES = ["type-only", "type-import"];
module.exports = {
  forbidden: [
    {
      name: "services-below-entry-points",
      comment: "Services hold the rules; they do not speak HTTP, Fedify, Durable Objects or render entities.",
      severity: "error",
      from: { path: "^src/services/" },
      to: {
        dependencyTypesNot: TYPES,
        path: "^src/(federation|objects|render|http|routes|cron)/|^src/(app|index|effects)\\.ts$",
      },
    },
    {
      name: "services-take-plain-inputs",
      comment:
        "Fetching and parsing remote documents is federation/'s (parse-note.ts, actors.ts, resolve.ts): services " +
        "take the plain values it reads (ParsedNote, ParsedActor), or a function to call, never a Fedify object.",
      severity: "error",
      from: { path: "^src/(services|render|db|content|lib|schemas)/|^src/env\\.ts$" },
      to: { path: "node_modules/@fedify/" },
    },
    {
      name: "render-is-pure",
      comment:
        "Renderers turn rows a service loaded into entities: no database (db/), no services (what they read is " +
        "loaded before: loadConversations, loadAdminStatuses…; their types are fine), no requests, no federation, " +
        "no side effects. notification.ts still loads its own rows until issue 43 moves that into a service.",
      severity: "error",
      from: { path: "^src/render/", pathNot: "^src/render/notification\\.ts$" },
      to: {
        dependencyTypesNot: TYPES,
        path: "^src/(db|services|federation|objects|http|routes|cron)/|^src/(app|index|effects)\\.ts$",
      },
    },
    {
      name: "foundations-import-nothing-above",
      comment: "db/, content/, lib/, schemas/ and env.ts are below every layer.",
      severity: "error",
      from: { path: "^src/(db|content|lib|schemas)/|^src/env\\.ts$" },
      to: {
        dependencyTypesNot: TYPES,
        path: "^src/(services|federation|objects|render|http|routes|cron)/|^src/(app|index|effects)\\.ts$",
      },
    },
    {
      name: "no-import-cycles",
      comment:
        "Modules import each other one way. The one loop allowed runs through federation/index.ts: the Federation " +
        "is built from every dispatcher and inbox listener, and what listeners call (resolve.ts, " +
        "thread-ancestors.ts, the delivery kick) looks remote documents up through that same Federation.",
      severity: "error",
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: TYPES, pathNot: "^src/federation/index\\.ts$" } },
    },
  ],
  options: {
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
  },
};
