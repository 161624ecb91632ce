export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

export const nsToMs = (ns: number): number => ns / 1e6;
