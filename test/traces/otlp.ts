// OTLP JSON as the Collector's file exporter writes it, for the trace tests'
// hand-made spans: attributes as KeyValues, and one line per service instance.

/** OTLP KeyValues of plain values (absent ones left out): strings, booleans, integers as decimal strings. */
export function kv(attrs: Record<string, unknown>): Array<{ key: string; value: Record<string, unknown> }> {
  return Object.entries(attrs)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([key, v]) => ({ key, value: typeof v === "string" ? { stringValue: v } : typeof v === "boolean" ? { boolValue: v } : { intValue: String(v) } }));
}

/** One line of the file exporter: `spans` (OTLP span objects) of one service instance. */
export function instanceLine(instance: string, spans: unknown[], resource: Record<string, unknown> = {}): string {
  return JSON.stringify({ resourceSpans: [{ resource: { attributes: kv({ ...resource, "service.instance.id": instance }) }, scopeSpans: [{ scope: { name: "fencecheck/otel" }, spans }] }] });
}
