/**
 * The daily cost model of the cost bench (bench/cost-model.ts) on fixed figures: its arithmetic (counts per day,
 * interpolation between measured points, shares of the Free caps, targets), checked in CI although the bench that
 * measures the real figures is not run there. Run by `npm test` with Node's test runner.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  ACTIONS,
  FREE_PLAN,
  INBOUND_COUNTERS,
  ONE_PERSON,
  SCENARIOS,
  between,
  checkTargets,
  day,
  dayLines,
  distinctFollowed,
  scenarioDay,
  zero,
  type Cost,
  type Figures,
} from "../bench/cost-model";
import { FLUSH_EVERY } from "../src/services/inbound-limits";

const cost = (c: Partial<Cost>): Cost => ({ ...zero(), ...c });

/** Every action costs one request; rows only where a test gives them. */
function figures(overrides: Partial<Record<string, Partial<Cost>>> = {}): Figures {
  const f: Figures = {};
  for (const name of Object.values(ACTIONS)) f[name] = cost({ requests: 1, ...overrides[name] });
  return f;
}

test("distinct followed accounts: the first user's, then half of each further user's", () => {
  assert.equal(distinctFollowed(ONE_PERSON), 300);
  assert.equal(distinctFollowed({ ...ONE_PERSON, users: 10 }), 300 + 9 * 150);
  assert.equal(distinctFollowed({ ...ONE_PERSON, users: 100 }), 300 + 99 * 150);
});

test("between: a straight line through two measured points", () => {
  const a = cost({ rowsRead: 10, rowsWritten: 5 });
  const b = cost({ rowsRead: 210, rowsWritten: 205 });
  assert.deepEqual(between(a, 0, b, 200, 0), a);
  assert.deepEqual(between(a, 0, b, 200, 200), b);
  assert.equal(between(a, 0, b, 200, 9).rowsWritten, 14);
  assert.equal(between(a, 1, b, 10, 1).rowsRead, 10);
});

test("an idle day is the cron's 1,440 runs (hourly ones with nothing to prune), and its share of each cap", () => {
  const f = figures({
    [ACTIONS.cronIdle]: { rowsRead: 10, rowsWritten: 2 },
    [ACTIONS.cronHourly]: { rowsRead: 1000, rowsWritten: 50 },
    [ACTIONS.cronHourlyIdle]: { rowsRead: 40, rowsWritten: 4 },
    [ACTIONS.cronMidnight]: { rowsRead: 10, rowsWritten: 2 },
    [ACTIONS.cronMidnightHourly]: { rowsRead: 5000, rowsWritten: 100 },
  });
  const idle = scenarioDay(
    f,
    SCENARIOS.find((s) => s.key === "idle")!,
  );
  assert.equal(idle.total.requests, 1440);
  // Nothing arrives, so nothing ages past the retention: the hourly runs (00:30 too) find nothing to prune.
  assert.equal(idle.total.rowsRead, 1415 * 10 + 24 * 40 + 10);
  assert.equal(idle.total.rowsWritten, 1415 * 2 + 24 * 4 + 2);
  assert.equal(idle.percent.requests, 1.44);
  assert.equal(idle.percent.rowsRead, (idle.total.rowsRead / FREE_PLAN.rowsRead) * 100);
  assert.equal(idle.percent.durableObjectRequests, 0);
});

test("one person's day: each line is its action's figures times its count", () => {
  const f = figures({ [ACTIONS.homePoll]: { rowsRead: 7 }, [ACTIONS.relayNew]: { rowsWritten: 30 } });
  const lines = dayLines(f, ONE_PERSON);
  const count = (from: string) => lines.find((l) => l.from === from)!.perDay;
  // 4 h of polls every 30 s.
  assert.equal(count(ACTIONS.homePoll), 480);
  assert.equal(count(ACTIONS.notificationsPoll), 480);
  assert.equal(count(ACTIONS.relayKnown) + count(ACTIONS.relayNew), 2000);
  assert.equal(count(ACTIONS.relayNew), 500);
  assert.equal(count(`${ACTIONS.inboundCreate} / ${ACTIONS.inboundCreate10}`), 600);
  assert.equal(count(ACTIONS.favourite), 30);
  assert.equal(count(ACTIONS.boost), 10);
  // The inbound counters: 2 rows per FLUSH_EVERY of the 2,600 inbound posts, at most; rows, not requests.
  assert.equal(count(INBOUND_COUNTERS), (2600 * 2) / FLUSH_EVERY);
  const d = day(lines);
  // The pruning of as many remote posts as arrive (2,600), in the hourly runs: no request of its own.
  assert.equal(count(ACTIONS.prune), (2600 * 23) / 24);
  const perDay = lines
    .filter((l) => l.from !== INBOUND_COUNTERS && l.from !== ACTIONS.prune)
    .reduce((n, l) => n + l.perDay, 0);
  assert.equal(d.total.requests, perDay);
  assert.equal(d.total.rowsRead, 480 * 7);
  assert.equal(d.total.rowsWritten, 500 * 30 + (2600 * 2) / FLUSH_EVERY);
  assert.equal(d.percent.rowsWritten, 15 + (2600 * 2) / FLUSH_EVERY / 1000);
});

test("more users: inbound posts by distinct followed accounts, each reaching its average number of local readers", () => {
  const f = figures({
    [ACTIONS.inboundCreate]: { rowsWritten: 10 },
    [ACTIONS.inboundCreate10]: { rowsWritten: 19 },
    [ACTIONS.post0]: { rowsWritten: 20 },
    [ACTIONS.post200]: { rowsWritten: 220 },
  });
  const lines = dayLines(f, { ...ONE_PERSON, users: 10 });
  const inbound = lines.find((l) => l.from.startsWith(ACTIONS.inboundCreate))!;
  assert.equal(inbound.perDay, 1650 * 2);
  // 10 × 300 follows over 1,650 accounts: 1.82 readers a post, one row written per reader above the first.
  assert.ok(Math.abs(inbound.each.rowsWritten - (10 + (3000 / 1650 - 1))) < 1e-9);
  const posts = lines.find((l) => l.from.startsWith(ACTIONS.post0))!;
  assert.equal(posts.perDay, 50);
  assert.equal(posts.each.rowsWritten, 29);
});

test("targets: met at or under their share, missed over it", () => {
  const f = figures({ [ACTIONS.relayKnown]: { rowsRead: 500 } });
  const days = Object.fromEntries(SCENARIOS.map((s) => [s.key, scenarioDay(f, s)]));
  const checks = checkTargets(days);
  // (a): 1,500 relayed posts × 500 rows = 750,000 = 15% of the read cap: met.
  const aRead = checks.find((c) => c.target.scenario === "a" && c.cap === "rowsRead")!;
  assert.equal(aRead.percent, 15);
  assert.equal(aRead.met, true);
  // (b): the same relay's 15% of the reads, and 10 users' requests far under 50%: met.
  assert.ok(checks.filter((c) => c.target.scenario === "b").every((c) => c.met));
  const f2 = figures({ [ACTIONS.relayKnown]: { rowsRead: 700 } });
  const days2 = Object.fromEntries(SCENARIOS.map((s) => [s.key, scenarioDay(f2, s)]));
  assert.equal(checkTargets(days2).find((c) => c.target.scenario === "a" && c.cap === "rowsRead")!.met, false);
});

test("a figure the bench did not measure is an error, not a zero", () => {
  const f = figures();
  delete f[ACTIONS.homePoll];
  assert.throws(() => dayLines(f, ONE_PERSON), /home poll/);
});
