// An HTTP(S) agent whose sockets dial somewhere else than the URL says: the
// worker's link through the fault proxy (a plain TCP relay), while every request
// still names the service's real host. That keeps what depends on the host name
// right: the Host header, which a SigV4 signature covers, and over https the
// certificate, checked against the real host name (and asked for by SNI), so TLS
// runs end to end between the client and the service, through the proxy.
import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { connect as netConnect, isIP, type Socket } from "node:net";
import { connect as tlsConnect, checkServerIdentity } from "node:tls";

/** Where the sockets go instead of the URL's host and port. */
export interface Dial {
  host: string;
  port: number;
}

/** A URL's host name as a socket or a certificate knows it (an IPv6 literal without its brackets). */
export const bareHost = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, "$1");

/**
 * An agent for requests to `url` whose connections dial `via`: an https.Agent
 * for an https URL (TLS with the URL's host name), an http.Agent otherwise.
 * Connections are kept alive, as the SDKs' own agents keep theirs.
 */
export function proxiedAgent(url: URL, via: Dial): HttpAgent | HttpsAgent {
  const host = bareHost(url);
  if (url.protocol === "https:") {
    const agent = new HttpsAgent({ keepAlive: true, maxSockets: 50 });
    agent.createConnection = (options: Record<string, unknown>) =>
      tlsConnect({
        // What the request and the agent bring for TLS (a CA given, a session to resume); never their address.
        ...pick(options, TLS_OPTIONS),
        host: via.host,
        port: via.port,
        // SNI takes a host name, never an address (RFC 6066).
        ...(isIP(host) ? {} : { servername: host }),
        checkServerIdentity: (_name, cert) => checkServerIdentity(host, cert),
      }) as unknown as Socket;
    return agent;
  }
  const agent = new HttpAgent({ keepAlive: true, maxSockets: 50 });
  agent.createConnection = () => netConnect({ host: via.host, port: via.port });
  return agent;
}

const TLS_OPTIONS = ["ca", "cert", "key", "pfx", "passphrase", "rejectUnauthorized", "minVersion", "maxVersion", "ciphers", "session"] as const;

function pick(options: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => options[k] !== undefined).map((k) => [k, options[k]]));
}
