/**
 * Long functions (issue 43): no function in src/ is over 100 lines, so that each step of a long job (creation,
 * deletion, delivery…) is a named function that can be read and tested alone, as GoToSocial writes them. Exempt:
 * the route tables (`register*Routes` in src/routes: one route after another, each route its own handler) and the
 * functions named in `ALLOWED`, each with the length it may not grow past and why it is long. This check parses
 * every source file with the TypeScript compiler and fails on a new long function, an allowed one that grew, or
 * an allowed one that is gone or short (its entry is then removed). Run by `npm test` with Node's test runner.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import ts from "typescript";

const SRC = join(import.meta.dirname, "..", "src");

/** Lines a function may span, from its first line (after its doc comment) to its closing brace. */
const MAX_LINES = 100;

/** A route table: `register…Routes` in src/routes. */
const ROUTE_TABLE = { file: /^routes\//, name: /^register\w*Routes$/ };

/** `file name` → the most lines the function may span, and why it is long. */
const ALLOWED: Record<string, { cap: number; why: string }> = {
  // Tables: one line per entry, nothing to name apart.
  "app.ts createApp": { cap: 123, why: "the app's table of route registrations, in the order they must match" },
};

interface Found {
  /** `file name` (the name an allowlist entry uses). */
  key: string;
  line: number;
  lines: number;
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.ts$/.test(name) && !name.endsWith(".generated.ts") ? [path] : [];
  });
}

/** A function's name: its own, or the variable, property or class member that holds it. */
function nameOf(node: ts.FunctionLikeDeclaration, file: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return "constructor";
  if (node.name) return node.name.getText(file);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText(file);
  if (ts.isBinaryExpression(parent)) return parent.left.getText(file);
  return "(anonymous)";
}

/** Every function in `text` (declarations, expressions, arrows, methods, accessors) longer than MAX_LINES. */
function longFunctions(file: string, text: string): Found[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Found[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.end).line;
      const lines = last - first + 1;
      const name = nameOf(node as ts.FunctionLikeDeclaration, source);
      const table = ROUTE_TABLE.file.test(file) && ROUTE_TABLE.name.test(name);
      if (lines > MAX_LINES && !table) found.push({ key: `${file} ${name}`, line: first + 1, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const found = sources(SRC).flatMap((path) => {
  const file = relative(SRC, path).replaceAll("\\", "/");
  return longFunctions(file, readFileSync(path, "utf8"));
});

test(`no function in src/ is over ${MAX_LINES} lines but the route tables and the allowed`, () => {
  const unallowed = found.filter((f) => !ALLOWED[f.key]).map((f) => `src/${f.key} (line ${f.line}): ${f.lines} lines`);
  assert.deepEqual(unallowed, [], "split these into named steps (or, for a table, allow it below with why)");
});

test("an allowed long function does not grow", () => {
  const grown = found
    .filter((f) => ALLOWED[f.key] && f.lines > ALLOWED[f.key].cap)
    .map((f) => `src/${f.key} (line ${f.line}): ${f.lines} lines, allowed ${ALLOWED[f.key].cap}`);
  assert.deepEqual(grown, []);
});

test("every allowed function is still long (a split or renamed one leaves the list)", () => {
  const longNow = new Set(found.map((f) => f.key));
  assert.deepEqual(
    Object.keys(ALLOWED).filter((key) => !longNow.has(key)),
    [],
  );
});

test("the check sees what it forbids", () => {
  const body = (n: number) => Array.from({ length: n - 2 }, (_, i) => `  x += ${i};`).join("\n");
  const fn = (head: string, n: number) => `${head} {\n${body(n)}\n}`;
  // Exactly MAX_LINES passes; one more does not, whatever holds the function.
  assert.deepEqual(longFunctions("a.ts", `/** doc */\n${fn("function ok()", MAX_LINES)}`), []);
  assert.deepEqual(longFunctions("a.ts", `\n${fn("export async function long()", MAX_LINES + 1)}`), [
    { key: "a.ts long", line: 2, lines: MAX_LINES + 1 },
  ]);
  assert.deepEqual(
    longFunctions("a.ts", `const arrow = () => ${fn("", MAX_LINES + 1)};`).map((f) => f.key),
    ["a.ts arrow"],
  );
  assert.deepEqual(
    longFunctions("a.ts", `class C {\n${fn("  method()", MAX_LINES + 1)}\n}`).map((f) => f.key),
    ["a.ts method"],
  );
  // A long function nested in another is found too (and so is the one holding it).
  assert.deepEqual(
    longFunctions("a.ts", `function outer() {\n  x.on("e", ${fn("function inner()", MAX_LINES + 1)});\n}`).map(
      (f) => f.key,
    ),
    ["a.ts outer", "a.ts inner"],
  );
  // Route tables are exempt in src/routes alone; a long handler inside one is not.
  const table = fn("export function registerThingRoutes(app: App)", MAX_LINES + 1);
  assert.deepEqual(longFunctions("routes/thing.ts", table), []);
  assert.deepEqual(longFunctions("services/thing.ts", table).length, 1);
  assert.deepEqual(
    longFunctions(
      "routes/thing.ts",
      `function registerThingRoutes() {\n  app.get("/", ${fn("async (c) =>", MAX_LINES + 1)});\n}`,
    ).map((f) => f.key),
    ["routes/thing.ts (anonymous)"],
  );
});
