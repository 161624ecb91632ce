// Turning values into text for people. Everything a history or resource log holds is
// user input (a key may be any string), so the HTML helpers here are the only way
// such text reaches the page, and the terminal helper strips control characters so
// a key cannot move the cursor or change colours.

const HTML_ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Text safe inside HTML/SVG element content and quoted attribute values. */
export function esc(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

/** One-line terminal text: C0/C1 controls (ESC starts ANSI sequences) become `?`. */
export function plain(value: unknown): string {
  return String(value).replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");
}

// Data values may be arbitrarily large.
export { clip } from "../lib/text.ts";
import { clip } from "../lib/text.ts";

/** A value as compact JSON, clipped; `undefined` (absent field) as an empty string. */
export function json(value: unknown, max = 160): string {
  if (value === undefined) return "";
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return clip(text, max);
}

/** Run time in seconds from nanoseconds, e.g. `12.345 s`. */
export function seconds(ns: number): string {
  return `${(ns / 1e9).toFixed(3)} s`;
}

/** A duration in milliseconds with a precision that suits its size. */
export function millis(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  if (ms >= 100) return `${Math.round(ms)} ms`;
  if (ms >= 10) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(2)} ms`;
}
