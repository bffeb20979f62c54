/**
 * The checks `npm test` runs before the vitest suite, in two lanes at once (the development machine has two cores,
 * and the type check alone is as long as all the others together): each command's output is printed whole when it
 * ends, with its time; a failed command stops its lane, the other lane finishes, and the exit code is 1 if any
 * failed. Plain JavaScript so that it starts without a TypeScript loader.
 */
import { spawn } from "node:child_process";

// Balanced by their times on a clean clone (2026-12-08): tsc 33 s and the first import check 3 s; Prettier 19 s,
// the runtime import check 8 s and the Node tests 11 s.
const lanes = [
  [
    ["tsc", "--noEmit"],
    ["depcruise", "src", "--config", ".dependency-cruiser.cjs"],
  ],
  [
    ["prettier", "--check", "."],
    ["depcruise", "src", "--config", ".dependency-cruiser-runtime.cjs"],
    ["node", "--import", "tsx", "--test", "scripts/*.test.ts"],
  ],
];

function run(argv) {
  const started = Date.now();
  return new Promise((resolve) => {
    // A shell, for npm's local binaries on PATH and the test files' glob.
    const child = spawn(argv.join(" "), {
      shell: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, PATH: `${import.meta.dirname}/../node_modules/.bin:${process.env.PATH}` },
    });
    const out = [];
    child.stdout.on("data", (d) => out.push(d));
    child.stderr.on("data", (d) => out.push(d));
    child.on("close", (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      process.stdout.write(`\n> ${argv.join(" ")}  (${seconds} s${code ? `, exit ${code}` : ""})\n`);
      process.stdout.write(Buffer.concat(out));
      resolve(code === 0);
    });
  });
}

async function lane(commands) {
  for (const argv of commands) if (!(await run(argv))) return false;
  return true;
}

const ok = (await Promise.all(lanes.map(lane))).every(Boolean);
process.exit(ok ? 0 : 1);
