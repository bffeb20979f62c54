/**
 * Import rules (docs/architecture.md, "Layers"), checked by `npm test` through dependency-cruiser: a wrong
 * import fails with the rule's name. Layers, top down: entry points (index.ts, app.ts, routes/, federation/,
 * cron/, objects/) → effects (after-commit sinks: effects.ts) → render/ (rows → entities) → services/ (rules;
 * one batch per action; return rows and Effects) → db/, content/, lib/, schemas/, env.ts.
 * Type-only imports are not dependencies at run time and are left out (env.ts names the Durable Object classes
 * its bindings hold).
 */
const TYPES = ["type-only", "type-import"];
const KNOWN_DEBTS = "^src/services/(resolve|remote-objects|remote-statuses)\\.ts$";
module.exports = {
  forbidden: [
    {
      name: "services-below-entry-points",
      comment: "Services hold the rules; they do not speak HTTP, Fedify, Durable Objects or render entities.",
      severity: "error",
      // Known, not to grow (issue 30's remainder): the services that still speak Fedify to fetch and parse remote
      // documents (to move into federation/, taking plain inputs as PostContext.resolveMentions does).
      from: { path: "^src/services/", pathNot: KNOWN_DEBTS },
      to: {
        dependencyTypesNot: TYPES,
        path: "^src/(federation|objects|render|http|routes|cron)/|^src/(app|index|effects)\\.ts$",
      },
    },
    {
      name: "render-is-pure",
      comment: "Renderers turn rows into entities: no requests, no federation, no side effects.",
      severity: "error",
      from: { path: "^src/render/" },
      to: {
        dependencyTypesNot: TYPES,
        path: "^src/(federation|objects|http|routes|cron)/|^src/(app|index|effects)\\.ts$",
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
  ],
  options: {
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
  },
};
