/**
 * A hand-written SVG line chart for bench/scaling.ts: one line per route, y linear from 0 (ms), x log-scaled
 * (data size), with axes, ticks and a legend. No dependency.
 */
export interface Series {
  name: string;
  points: { x: number; y: number }[];
}

const COLOURS = [
  "#1f77b4",
  "#ff7f0e",
  "#2ca02c",
  "#d62728",
  "#9467bd",
  "#8c564b",
  "#e377c2",
  "#17becf",
  "#7f7f7f",
  "#bcbd22",
];
const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const label = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${n / 1000}k` : String(n));

/** A round step giving about five ticks up to `max`. */
function step(max: number) {
  const raw = max / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
}

export function chart(
  sizes: number[],
  series: Series[],
  title = "p50 latency of 200 sequential requests against data size",
): string {
  const H = 420;
  const plot = { left: 60, top: 40, width: 420, height: 320 };
  const legendX = plot.left + plot.width + 20;
  // Wide enough for the longest legend entry (about 7 px a character at 12 px).
  const W = Math.max(760, legendX + 34 + 7 * Math.max(0, ...series.map((s) => s.name.length)));
  const logs = sizes.map(Math.log10);
  const [lo, hi] = [Math.min(...logs), Math.max(...logs)];
  // One size alone still gets a usable axis.
  const span = hi - lo || 1;
  const xAt = (x: number) => plot.left + ((Math.log10(x) - lo + (hi === lo ? 0.5 : 0)) / span) * plot.width;
  const maxY = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p.y)));
  const dy = step(maxY);
  const top = Math.ceil(maxY / dy) * dy;
  const yAt = (y: number) => plot.top + plot.height - (y / top) * plot.height;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="20" text-anchor="middle" font-size="14">${esc(title)}</text>`,
  ];
  for (let y = 0; y <= top + 1e-9; y += dy) {
    out.push(`<line x1="${plot.left}" x2="${plot.left + plot.width}" y1="${yAt(y)}" y2="${yAt(y)}" stroke="#ddd"/>`);
    out.push(`<text x="${plot.left - 6}" y="${yAt(y) + 4}" text-anchor="end">${+y.toFixed(3)}</text>`);
  }
  for (const s of sizes) {
    out.push(`<line x1="${xAt(s)}" x2="${xAt(s)}" y1="${plot.top}" y2="${plot.top + plot.height}" stroke="#eee"/>`);
    out.push(`<text x="${xAt(s)}" y="${plot.top + plot.height + 16}" text-anchor="middle">${label(s)}</text>`);
  }
  out.push(
    `<rect x="${plot.left}" y="${plot.top}" width="${plot.width}" height="${plot.height}" fill="none" stroke="#333"/>`,
  );
  out.push(
    `<text x="${plot.left + plot.width / 2}" y="${H - 12}" text-anchor="middle">statuses in the database (log scale)</text>`,
  );
  out.push(
    `<text transform="translate(16 ${plot.top + plot.height / 2}) rotate(-90)" text-anchor="middle">p50 latency (ms)</text>`,
  );
  series.forEach((s, i) => {
    const colour = COLOURS[i % COLOURS.length];
    const pts = s.points.map((p) => `${xAt(p.x).toFixed(1)},${yAt(p.y).toFixed(1)}`);
    out.push(`<polyline points="${pts.join(" ")}" fill="none" stroke="${colour}" stroke-width="2"/>`);
    for (const p of pts) out.push(`<circle cx="${p.split(",")[0]}" cy="${p.split(",")[1]}" r="3" fill="${colour}"/>`);
    const ly = plot.top + 8 + i * 20;
    out.push(`<line x1="${legendX}" x2="${legendX + 18}" y1="${ly}" y2="${ly}" stroke="${colour}" stroke-width="2"/>`);
    out.push(`<text x="${legendX + 24}" y="${ly + 4}">${esc(s.name)}</text>`);
  });
  out.push("</svg>");
  return out.join("\n") + "\n";
}
