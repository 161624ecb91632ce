// The set of proxies, by name, and the proxy-level operations of the API: create,
// populate (create or update many), update, delete, reset. Request bodies are
// checked here, in Toxiproxy's order and with its messages.
import { ApiError, asApiError, badBody, missingField, proxyExists, proxyNotFound } from "./api-error.ts";
import { Proxy, sameListen, type ProxyJson, type ProxySettings } from "./proxy.ts";
import { ProxyMetrics } from "./metrics.ts";

interface ProxyBody {
  name: string;
  listen: string;
  upstream: string;
  enabled: boolean;
}

// Toxiproxy would listen on every interface when no address is given; we keep to loopback.
const DEFAULT_LISTEN = "127.0.0.1:0";

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function field<T extends "string" | "boolean">(body: Record<string, unknown>, key: string, kind: T): (T extends "string" ? string : boolean) | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== kind) throw badBody(`${key} must be a ${kind}`);
  return v as T extends "string" ? string : boolean;
}

/** `where` names the item in a populate list, as Toxiproxy's "name at proxy 2". */
function parseProxyBody(body: unknown, where = ""): ProxyBody {
  if (!isObject(body)) throw badBody("expected a JSON object");
  const name = field(body, "name", "string");
  const listen = field(body, "listen", "string");
  const upstream = field(body, "upstream", "string");
  const enabled = field(body, "enabled", "boolean");
  if (!name) throw missingField(`name${where}`);
  if (!upstream) throw missingField(`upstream${where}`);
  return { name, listen: listen || DEFAULT_LISTEN, upstream, enabled: enabled ?? true };
}

export interface PopulateAnswer {
  status: number;
  body: { proxies: ProxyJson[] | null; error?: string; status?: number };
}

export class ProxyCollection {
  private readonly proxies = new Map<string, Proxy>();

  /** GET /metrics: every proxy reports its connections to it. */
  readonly metrics = new ProxyMetrics(this);

  list(): Proxy[] {
    return [...this.proxies.values()];
  }

  all(): Record<string, ProxyJson> {
    const out: Record<string, ProxyJson> = {};
    for (const [name, p] of this.proxies) out[name] = p.json();
    return out;
  }

  get(name: string): Proxy {
    const p = this.proxies.get(name);
    if (!p) throw proxyNotFound();
    return p;
  }

  async create(body: unknown): Promise<ProxyJson> {
    const input = parseProxyBody(body);
    if (this.proxies.has(input.name)) throw proxyExists();
    const proxy = new Proxy(input.name, input.listen, input.upstream, this.metrics);
    // A proxy that cannot listen is not added (500, the listen error's message).
    if (input.enabled) await proxy.start();
    this.proxies.set(input.name, proxy);
    return proxy.json();
  }

  /**
   * Create or update each proxy, in the order given (a name given twice is
   * created, then replaced, as Toxiproxy does). One whose address and upstream
   * are unchanged is kept, toxics and connections included; one that changed is
   * replaced. Every item is checked before anything changes; an error answers
   * with the proxies done so far, `null` when none was begun, as Toxiproxy does.
   */
  async populate(body: unknown): Promise<PopulateAnswer> {
    const failed = (e: unknown, proxies: ProxyJson[] | null): PopulateAnswer => {
      const err = asApiError(e);
      return { status: err.status, body: { error: err.message, status: err.status, proxies } };
    };
    let inputs: ProxyBody[];
    try {
      if (!Array.isArray(body)) throw badBody("expected a JSON array of proxies");
      inputs = body.map((item, i) => parseProxyBody(item, ` at proxy ${i + 1}`));
    } catch (e) {
      return failed(e, null);
    }
    const done: Proxy[] = [];
    try {
      for (const input of inputs) done.push(await this.createOrUpdate(input));
    } catch (e) {
      return failed(e, done.map((p) => p.json()));
    }
    return { status: 201, body: { proxies: done.map((p) => p.json()) } };
  }

  private async createOrUpdate(input: ProxyBody): Promise<Proxy> {
    const existing = this.proxies.get(input.name);
    if (existing && sameListen(input.listen, existing.listen) && input.upstream === existing.upstream) {
      await existing.update({ enabled: input.enabled });
      return existing;
    }
    if (existing) await existing.stop();
    const proxy = new Proxy(input.name, input.listen, input.upstream, this.metrics);
    if (input.enabled) await proxy.start();
    this.proxies.set(input.name, proxy);
    return proxy;
  }

  async update(name: string, body: unknown): Promise<ProxyJson> {
    const proxy = this.get(name);
    if (!isObject(body)) throw badBody("expected a JSON object");
    const settings: ProxySettings = {
      // An empty address means "as it is", not "nowhere".
      listen: field(body, "listen", "string") || undefined,
      upstream: field(body, "upstream", "string") || undefined,
      enabled: field(body, "enabled", "boolean"),
    };
    await proxy.update(settings);
    return proxy.json();
  }

  async remove(name: string): Promise<void> {
    const proxy = this.get(name);
    await proxy.stop();
    this.proxies.delete(name);
  }

  /** Every proxy enabled, every toxic deleted. */
  async reset(): Promise<void> {
    for (const proxy of this.proxies.values()) {
      await proxy.start();
      proxy.removeAllToxics();
    }
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.proxies.values()].map((p) => p.stop()));
    this.proxies.clear();
  }
}
