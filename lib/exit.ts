// Exit codes of test and check, as docs/history-format.md fixes them, and the
// one error type that means "the user gave us something wrong" (exit 254).

export const EXIT = { valid: 0, invalid: 1, unknown: 2, badInput: 254, crash: 255 } as const;

/** Bad options, requests or files: the message names what is wrong and where. */
export class BadInput extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BadInput";
  }
}

export function exitCodeFor(valid: boolean | "unknown"): number {
  return valid === true ? EXIT.valid : valid === false ? EXIT.invalid : EXIT.unknown;
}
