// The type of entries.mjs for the TypeScript that imports it (test/build-entries.test.ts).
export declare const ENTRIES: readonly string[];
export declare const TYPED_ENTRIES: readonly string[];
