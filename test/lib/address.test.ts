// The host:port users give for their own servers (--pg, --endpoints).
import { describe, expect, it } from "vitest";
import { parseHostPort } from "../../lib/index.ts";

describe("parseHostPort", () => {
  it("reads a name, an IPv4 address and a bracketed IPv6 address with a port", () => {
    expect(parseHostPort("db.example:5432")).toEqual({ host: "db.example", port: 5432 });
    expect(parseHostPort(" 127.0.0.1:26379 ")).toEqual({ host: "127.0.0.1", port: 26379 });
    expect(parseHostPort("[::1]:2379")).toEqual({ host: "::1", port: 2379 });
  });

  it("refuses what is not one address with a port from 1 to 65535", () => {
    for (const bad of ["", "host", ":5432", "host:", "host:0", "host:65536", "host:123456", "a:1:2", "::1:2379", "ho st:1", "[::1]", "host:12ab"])
      expect([bad, parseHostPort(bad)]).toEqual([bad, null]);
  });
});
