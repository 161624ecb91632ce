// The page's inline CSS and its one small script. Inline so the page needs no network
// and nothing beside it: a run directory can be copied anywhere and still viewed.
// Colours: accepted green, refused red, failed orange, unknown purple, across both
// plots; faults have one tint each, none of them red, which is kept for witnesses.

export const CSS = `
:root { --ok:#2b9a3e; --stale:#d62728; --fail:#f28e2b; --info:#8e44ad; --hold:#4c78a8; --ink:#1d2228; --muted:#667; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); margin: 0; background: #fff; }
main { padding: 16px 24px 48px; max-width: 1400px; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #dde; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 16px 0 6px; } code, pre, td { font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; font-size: 12px; }
.verdict { display: inline-block; padding: 2px 10px; border-radius: 4px; color: #fff; font-weight: 700; letter-spacing: .04em; margin-right: 8px; }
.verdict.VALID { background: var(--ok); } .verdict.INVALID { background: var(--stale); } .verdict.UNKNOWN { background: #b8860b; }
.run { color: var(--muted); } .note { color: var(--muted); font-style: italic; } .none { color: var(--ok); font-weight: 600; }
.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr)); gap: 8px; margin: 12px 0; }
.figure { border: 1px solid #dde; border-radius: 6px; padding: 6px 10px; } .figure b { display: block; font-size: 18px; } .figure span { color: var(--muted); font-size: 12px; }
table { border-collapse: collapse; margin: 6px 0; } th, td { border: 1px solid #dde; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #f3f4f7; font: 600 12px system-ui, sans-serif; } td code { white-space: pre-wrap; word-break: break-all; }
tr.t-fail td, tr.refused td { background: #fff3e8; } tr.t-info td { background: #f6effa; } tr.missing td { color: var(--muted); }
.pair { display: block; color: var(--muted); font-size: 11px; }
.anomaly h3 { color: var(--stale); } .count { color: var(--muted); font-weight: 400; font-size: 13px; }
ol.witnesses > li { margin: 6px 0 14px; padding: 4px 8px; border-left: 3px solid transparent; }
ol.witnesses > li:target { border-left-color: var(--stale); background: #fff6f6; }
.explanation { margin: 2px 0; } a.show { font-size: 12px; margin-left: 6px; white-space: nowrap; }
.scroll { overflow: auto; max-height: 80vh; border: 1px solid #dde; border-radius: 4px; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 16px; margin: 6px 0; font-size: 12px; } .legend svg { vertical-align: middle; margin-right: 3px; }
svg text { font-family: system-ui, sans-serif; }
.lane { fill: #f5f6f9; } .lane-label { fill: #445; } .grid { stroke: #e3e5ea; } .tick { font-size: 11px; fill: #667; }
.plot { fill: none; stroke: #dde; }
.hold { fill: var(--hold); } .hold.k0 { fill:#4c78a8 } .hold.k1 { fill:#59a14f } .hold.k2 { fill:#b07aa1 } .hold.k3 { fill:#9c755f }
.hold.k4 { fill:#76b7b2 } .hold.k5 { fill:#edc948 } .hold.k6 { fill:#ff9da7 } .hold.k7 { fill:#bab0ac }
.ext { fill: url(#hatch); stroke: var(--hold); stroke-width: .5; } .hatch { fill: var(--hold); opacity: .6; }
.hold.read { fill-opacity: .35; stroke: var(--hold); stroke-width: 1.2; } .ext.read { opacity: .5; }
.hold.k1.read { stroke:#59a14f } .hold.k2.read { stroke:#b07aa1 } .hold.k3.read { stroke:#9c755f } .hold.k4.read { stroke:#76b7b2 }
.hold.k5.read { stroke:#edc948 } .hold.k6.read { stroke:#ff9da7 } .hold.k7.read { stroke:#bab0ac }
.bar-label { fill: #fff; font-weight: 700; pointer-events: none; } .hold.read + .bar-label { fill: #1d2228; }
.entry { fill: #0b1f33; fill-opacity: .3; stroke: #fff; stroke-width: .8; }
.reentry .bar-label { stroke: #0b1f33; stroke-width: 2px; paint-order: stroke; }
.op-cancel, .op-cancel-unknown { fill: none; stroke-width: 2; stroke-linecap: round; } .op-cancel { stroke: #555; } .op-cancel-unknown { stroke: var(--info); }
.lvl-bg { fill: #eef0f4; fill-opacity: .45; } .lvl-base { stroke: #ccd; } .lvl-possible { fill: var(--hold); fill-opacity: .15; stroke: none; }
.lvl-certain { fill: none; stroke: var(--hold); stroke-width: 1.5; } .lvl-permits { stroke: #556; stroke-dasharray: 4 3; }
.lvl-over { fill: var(--stale); fill-opacity: .8; } .lvl-axis { font-size: 10px; fill: #556; }
.tag { font-size: 11px; font-weight: 600; padding: 1px 6px; border-radius: 3px; margin-left: 6px; vertical-align: middle; }
.tag.liveness { background: #fdf3d8; color: #8a6500; border: 1px solid #e6cf8a; }
.anomaly.liveness h3 { color: #8a6500; }
.witness.liveness .ring { stroke: #b8860b; } .witness.liveness:target .band { fill: #b8860b; }
.w-ok, .w-stale, .w-fail, .w-info { stroke-width: 2.5; } .w-ok { stroke: var(--ok); } .w-stale { stroke: var(--stale); }
.w-fail { stroke: var(--fail); } .w-info { stroke: var(--info); stroke-dasharray: 2 1; }
.op-fail { fill: var(--fail); } .op-info { fill: #fff; stroke: var(--info); stroke-width: 1.5; }
.span { stroke: #9aa; stroke-width: 1; stroke-dasharray: 3 2; }
.pt-ok { fill: var(--hold); opacity: .75; } .pt-fail { stroke: var(--fail); stroke-width: 1.6; fill: none; } .pt-info { fill: var(--info); }
.pct { stroke: #889; stroke-dasharray: 6 3; } .pct-label { font-size: 11px; fill: #556; }
.pt-overtaken { fill: #e377c2; }
[class^="fault-"] { fill-opacity: .22; } .instant line { stroke-width: 2; stroke-dasharray: 4 2; stroke-opacity: .8; }
.fault-pause { fill: #e0a800; stroke: #e0a800; } .fault-partition { fill: #17a2b8; stroke: #17a2b8; }
.fault-latency { fill: #9c755f; stroke: #9c755f; } .fault-clock { fill: #9467bd; stroke: #9467bd; }
.fault-kill { fill: #555; stroke: #555; } .fault-other { fill: #888; stroke: #888; }
rect[class^="fault-"] { stroke: none; } rect.unhealed { fill-opacity: .12; }
text.fault-label { fill-opacity: 1; stroke: none; font-size: 11px; font-weight: 600; }
rect.lane-fault { fill-opacity: .45; stroke-opacity: .9; stroke-width: 1; } .lane-worker { fill: #889; }
text.fault-label.fault-pause { fill: #8a6500; } text.fault-label.fault-partition { fill: #0f6f7e; }
.witness .band { fill: var(--stale); opacity: 0; pointer-events: none; }
.witness .ring { fill: none; stroke: var(--stale); stroke-width: 1.5; }
.witness:target .band { opacity: .2; } .witness:target .ring { stroke-width: 3; animation: pulse 1s ease-in-out 3; }
@keyframes pulse { 50% { stroke-opacity: .25; } }
`;

/** Centre a fragment target, which may sit inside the horizontally scrolled timeline. */
export const SCRIPT = `
(function () {
  function show() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (el && el.scrollIntoView) el.scrollIntoView({ block: "center", inline: "center" });
  }
  addEventListener("hashchange", show);
  addEventListener("load", show);
})();
`;
