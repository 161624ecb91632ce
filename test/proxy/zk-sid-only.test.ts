// zk_sid_only, our toxic for ZooKeeper's election connections: the first message
// (version, id, advertised address) becomes the old form, the id alone, however
// the bytes are cut into chunks; what follows passes untouched, and the bytes
// dropped are accounted for (flow control waits for them otherwise).
import { describe, it, expect } from "vitest";
import { ZkSidOnlyStage, type Chunk } from "../../proxy/stages.ts";

function run(chunks: Buffer[]): { out: Buffer; dropped: number; closed: boolean } {
  const out: Buffer[] = [];
  let dropped = 0;
  let closed = false;
  const stage = new ZkSidOnlyStage({ emit: (c: Chunk) => out.push(c.data), close: () => (closed = true), reset: () => {}, drop: (n) => (dropped += n) });
  for (const data of chunks) stage.push({ data, at: 0 });
  stage.end();
  return { out: Buffer.concat(out), dropped, closed };
}

function firstMessage(version: bigint, sid: bigint, address: string): Buffer {
  const head = Buffer.alloc(20);
  head.writeBigInt64BE(version, 0);
  head.writeBigInt64BE(sid, 8);
  head.writeInt32BE(Buffer.byteLength(address), 16);
  return Buffer.concat([head, Buffer.from(address)]);
}

describe("zk_sid_only", () => {
  const rest = Buffer.from("notification bytes");
  const sid = Buffer.alloc(8);
  sid.writeBigInt64BE(2n);

  it("leaves the id alone of a new-protocol first message, in any chunking", () => {
    const whole = Buffer.concat([firstMessage(-65536n, 2n, "127.0.0.1:28460"), rest]);
    for (const cuts of [[whole.length], [3, 12, 19, 25], [1, 1, 1, 40]]) {
      const chunks: Buffer[] = [];
      let at = 0;
      for (const n of cuts) chunks.push(whole.subarray(at, (at = Math.min(whole.length, at + n))));
      if (at < whole.length) chunks.push(whole.subarray(at));
      const r = run(chunks);
      expect(r.out).toEqual(Buffer.concat([sid, rest]));
      expect(r.dropped).toBe(whole.length - 8 - rest.length);
      expect(r.closed).toBe(true);
    }
  });

  it("passes an old-protocol first message (a non-negative id) as it is", () => {
    const whole = Buffer.concat([sid, rest]);
    expect(run([whole.subarray(0, 5), whole.subarray(5)]).out).toEqual(whole);
  });
});
