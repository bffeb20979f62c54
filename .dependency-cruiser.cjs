/**
 * Import rules (docs/architecture.md, "Layers"), checked by `npm test` through dependency-cruiser: a wrong
 * import fails with the rule's name. Layers, top down: entry points (index.ts, app.ts, routes/, federation/,
 * cron/, objects/) → effects/ (the after-commit door) → render/ (rows → entities) → services/ (rules; one batch
 * per action; return rows and Effects) → db/, content/, lib/, schemas/, env.ts. Inside federation/, its rooms
 * (federation/index.ts says which) import down too.
 * The layer rules leave type-only imports out; the cycle rule here counts them (a type names what it depends on).
 * Cycles of runtime imports alone are checked by .dependency-cruiser-runtime.cjs, with no exemption.
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
        path: "^src/(federation|objects|render|http|routes|cron)/|^src/(app|index)\\.ts$|^src/effects/",
      },
    },
    {
      name: "services-take-plain-inputs",
      comment:
        "Fetching and parsing remote documents is federation/'s (documents/parse-note.ts, documents/parse-actor.ts, fetching/resolve.ts): services " +
        "take the plain values it reads (ParsedNote, ParsedActor), or a function to call, never a Fedify object.",
      severity: "error",
      from: { path: "^src/(services|render|db|content|lib|schemas)/|^src/env\\.ts$" },
      to: { path: "node_modules/@fedify/" },
    },
    {
      name: "render-is-pure",
      comment:
        "Renderers turn rows a service loaded into entities: no database (db/), no services (what they read is " +
        "loaded before: loadConversations, loadAdminStatuses, loadNotificationsNamed…; their types are fine), no " +
        "requests, no federation, no side effects.",
      severity: "error",
      from: { path: "^src/render/" },
      to: {
        dependencyTypesNot: TYPES,
        path: "^src/(db|services|federation|objects|http|routes|cron)/|^src/(app|index)\\.ts$|^src/effects/",
      },
    },
    {
      name: "foundations-import-nothing-above",
      comment: "db/, content/, lib/, schemas/ and env.ts are below every layer.",
      severity: "error",
      from: { path: "^src/(db|content|lib|schemas)/|^src/env\\.ts$" },
      to: {
        dependencyTypesNot: TYPES,
        path: "^src/(services|federation|objects|render|http|routes|cron)/|^src/(app|index)\\.ts$|^src/effects/",
      },
    },
    {
      name: "effects-below-entry-points",
      comment:
        "The after-commit door hands work to sinks; what reaches other servers is registered by src/index.ts " +
        "(registerFederationSinks), so the door imports no entry point and nothing of federation/.",
      severity: "error",
      from: { path: "^src/effects/" },
      to: {
        dependencyTypesNot: TYPES,
        path: "^src/(federation|objects|http|routes|cron)/|^src/(app|index)\\.ts$",
      },
    },
    {
      name: "federation-documents-are-shapes",
      comment:
        "documents/ builds and reads ActivityStreams documents: it listens to nothing, fetches nothing, sends " +
        "nothing, and knows no built Federation (dispatchers get theirs from Fedify).",
      severity: "error",
      from: { path: "^src/federation/documents/" },
      to: {
        path: "^src/federation/(listening|fetching|delivery)/|^src/federation/(federation|index)\\.ts$|^src/federation/door/handle\\.ts$",
      },
    },
    {
      name: "federation-door-primitives-stay-low",
      comment:
        "door/'s checks, guards and loaders are used by every room: they use none of them. Only the Worker's " +
        "door itself (door/handle.ts) reaches the built Federation and the documents it serves first.",
      severity: "error",
      from: { path: "^src/federation/door/", pathNot: "^src/federation/door/handle\\.ts$" },
      to: { path: "^src/federation/(listening|fetching|delivery|documents)/|^src/federation/(federation|index)\\.ts$" },
    },
    {
      name: "federation-fetching-below-listening",
      comment: "Listeners fetch (a thread's ancestors, an actor); fetching does not listen, nor send.",
      severity: "error",
      from: { path: "^src/federation/fetching/" },
      to: {
        path: "^src/federation/(listening|delivery)/|^src/federation/index\\.ts$|^src/federation/door/handle\\.ts$",
      },
    },
    {
      name: "federation-listening-writes-the-outbox",
      comment:
        "A listener's answer (an Accept, a Reject) is an outbox row its service writes, sent by delivery/ " +
        "after the door: listeners do not send.",
      severity: "error",
      from: { path: "^src/federation/listening/" },
      to: { path: "^src/federation/delivery/|^src/federation/index\\.ts$|^src/federation/door/handle\\.ts$" },
    },
    {
      name: "federation-delivery-sends-only",
      comment: "delivery/ builds (documents/) and sends what the outbox holds; it neither listens nor fetches.",
      severity: "error",
      from: { path: "^src/federation/delivery/" },
      to: {
        path: "^src/federation/(listening|fetching)/|^src/federation/index\\.ts$|^src/federation/door/handle\\.ts$",
      },
    },
    {
      name: "federation-entry-through-index",
      comment:
        "The built Federation is reached through federation/index.ts (which sets its inbox listeners) from " +
        "outside federation/: a context asked for before that would have no inbox.",
      severity: "error",
      from: { pathNot: "^src/federation/" },
      to: { path: "^src/federation/(federation|data)\\.ts$|^src/federation/door/handle\\.ts$" },
    },
    {
      name: "no-import-cycles",
      comment:
        "Modules import each other one way, types included: the bottom of the house (env.ts, db/) names nothing " +
        "above it (the Durable Objects' methods are interfaces in env.ts, implemented by the classes).",
      severity: "error",
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
  },
};
