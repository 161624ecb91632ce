// "host:port" as users write an address of theirs on the command line (--pg,
// --endpoints): a host name, an IPv4 address or a bracketed IPv6 one, and a port
// from 1 to 65535. The fault proxy reads Toxiproxy's addresses by Toxiproxy's own
// rules instead (proxy/proxy.ts: port 0 and an empty host are allowed there).
export function parseHostPort(text: string): { host: string; port: number } | null {
  const t = text.trim();
  const m = /^\[([^\]\s]+)\]:(\d{1,5})$/.exec(t) ?? /^([^:\s[\]]+):(\d{1,5})$/.exec(t);
  if (!m) return null;
  const port = Number(m[2]);
  return port >= 1 && port <= 65535 ? { host: m[1], port } : null;
}
