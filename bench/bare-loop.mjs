// The floor bench:checker holds `npm run check` to: a process that reads a run's
// history.ndjson and resource.ndjson in large chunks, cuts them into lines and
// JSON.parses every line, and does nothing else. Plain JavaScript, so nothing
// is compiled or bundled at its start, and node's start counts for it as it does
// for `npm run check`.
//
//   node bench/bare-loop.mjs <run directory>
import { closeSync, openSync, readSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2];
let lines = 0;
const buf = Buffer.allocUnsafe(8 << 20);
for (const file of ["history.ndjson", "resource.ndjson"]) {
  const fd = openSync(join(dir, file), "r");
  let carry = "";
  for (;;) {
    const bytes = readSync(fd, buf, 0, buf.length, null);
    if (bytes === 0) break;
    const text = carry + buf.toString("utf8", 0, bytes);
    let start = 0;
    for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", start)) {
      JSON.parse(text.slice(start, nl));
      lines++;
      start = nl + 1;
    }
    carry = text.slice(start);
  }
  closeSync(fd);
}
console.log(lines);
