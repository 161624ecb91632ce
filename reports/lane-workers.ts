// The timeline's lanes in the words of the faults. A lane is a history process
// (p3) while the nemesis names workers (worker-1) and links (worker-1->redis-1);
// run.json's `processes` joins them, so each lane is labelled with its worker, and a
// fault on a worker or its links is drawn again on the lanes of the processes it
// hit, where a reader looks for why that holder went wrong. Faults on servers hit
// every client and stay shaded across every lane. A run without the map says so.
import { faultReach, knownWorkers } from "../checker/index.ts";
import { esc } from "./format.ts";
import type { Lanes } from "./lanes.ts";
import type { PageData } from "./page-data.ts";
import { faultClass, faultTitle, px } from "./svg.ts";

/** The label column's width: wider when the labels name workers. */
export const labelWidth = (m: PageData): number => (m.processes ? 132 : 96);

const workerOf = (m: PageData, p: number): string | undefined => m.processes?.[String(p)]?.worker;

/** The lanes' backgrounds and labels: `p3 · worker-1`, or `p3 +2 · worker-1` for processes sharing a lane. */
export function renderLaneLabels(m: PageData, lanes: Lanes, laneY: (l: number) => number, lh: number, left: number, width: number): string {
  const out: string[] = [];
  const fontSize = Math.min(12, Math.max(5, lh - 2));
  lanes.members.forEach((procs, lane) => {
    const y = laneY(lane);
    if (lane % 2 === 0) out.push(`<rect class="lane" x="0" y="${y}" width="${left + width}" height="${lh}"/>`);
    const name = procs.length === 1 ? `p${procs[0]}` : `p${procs[0]} +${procs.length - 1}`;
    const workers = [...new Set(procs.map((p) => workerOf(m, p) ?? "?"))];
    const worker = !m.processes ? "" : workers.length === 1 ? workers[0] === "?" ? "" : workers[0] : `${workers.length} workers`;
    // Tiny lanes get a label every few lanes only; the tooltip still names each one.
    if (lh < 9 && lane % Math.ceil(9 / lh) !== 0) return;
    const each = procs.map((p) => {
      const place = m.processes?.[String(p)];
      return place ? `p${p} (${place.worker}, client ${place.client})` : `p${p}`;
    });
    out.push(`<text class="lane-label" x="${left - 6}" y="${px(y + lh / 2 + fontSize * 0.35)}" font-size="${fontSize}" text-anchor="end" data-lane="${lane}">` +
      `${name}${worker ? `<tspan class="lane-worker"> · ${esc(worker)}</tspan>` : ""}<title>lane ${lane}: ${esc(each.join(", "))}</title></text>`);
  });
  return `<g class="lanes">${out.join("")}</g>`;
}

/**
 * Each fault on a worker or its links, drawn on the lanes of that worker's
 * processes for as long as both the fault and the process lasted. Empty without
 * the map: the shading across every lane is then all the page can say.
 */
export function renderLaneFaults(m: PageData, lanes: Lanes, x: (t: number) => number, laneY: (l: number) => number, lh: number): string {
  if (!m.processes) return "";
  const known = knownWorkers(m.processes);
  const out: string[] = [];
  for (const w of m.windows) {
    const { workers, on } = faultReach(w, known);
    if (on === "server") continue;
    lanes.members.forEach((procs, lane) => {
      for (const p of procs) {
        const worker = workerOf(m, p);
        const span = lanes.span.get(p);
        if (worker === undefined || !workers.has(worker) || !span) continue;
        const from = Math.max(w.from, span.first), to = Math.min(w.to, span.last);
        if (to < from) continue;
        const x0 = x(from), x1 = Math.max(x(to), x0 + 2);
        out.push(`<rect class="lane-fault ${faultClass(w.kind)}" x="${px(x0)}" y="${px(laneY(lane) + 1)}" width="${px(x1 - x0)}" height="${px(Math.max(1, lh - 2))}">` +
          `<title>${esc(`${faultTitle(w)}: hit p${p}, which ran in ${worker}`)}</title></rect>`);
      }
    });
  }
  return out.length ? `<g class="lane-faults">${out.join("")}</g>` : "";
}

/** What the page says above the timeline of a run whose run.json has no map (null: it has one). */
export function processMapNote(m: PageData): string | null {
  if (m.processes) return null;
  return "This run predates run.json's processes map (or was not made by fencecheck test): lanes are not matched to workers, " +
    "and a fault on a worker or its links is shaded across every lane; the witnesses name the faults on servers only.";
}
