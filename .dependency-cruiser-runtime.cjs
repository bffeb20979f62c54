/**
 * Cycles of runtime imports, with no exemption (`npm test`, `npm run imports`). The main config
 * (.dependency-cruiser.cjs) counts type-only imports too, and dependency-cruiser reports one path per cycle: a
 * runtime loop whose reported path ran through a type-only import would be excused by a rule that leaves types
 * out. Without the types in the graph (`tsPreCompilationDeps: false`), every cycle found is a runtime one.
 */
module.exports = {
  forbidden: [
    {
      name: "no-runtime-cycles",
      comment:
        "What a module imports at run time is evaluated before it: a loop makes the order depend on who is " +
        "imported first. Break it by handing the upper module's function in (as src/index.ts registers the " +
        "effects door's federation sinks, and federation/index.ts the inbox listeners).",
      severity: "error",
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: false,
    doNotFollow: { path: "node_modules" },
  },
};
