// Types for redlock 4.2.0, installed under the alias `redlock4` (it ships none):
// only what backends/redlock/node-redlock-4.ts uses, as its redlock.js defines it.
declare module "redlock4" {
  import { EventEmitter } from "node:events";

  namespace Redlock4 {
    interface Options {
      driftFactor?: number;
      retryCount?: number;
      retryDelay?: number;
      retryJitter?: number;
    }
    /** What it needs of a node: ioredis' evalsha and eval, called with a callback. */
    interface Client {
      evalsha(...args: unknown[]): unknown;
      eval(...args: unknown[]): unknown;
      quit(): unknown;
    }
    interface Lock {
      resource: string | string[];
      value: string;
      /** Date.now() ms when it stops being valid: attempt start + ttl - drift. */
      expiration: number;
      attempts: number;
      unlock(): Promise<void>;
      extend(ttl: number): Promise<Lock>;
    }
    interface Script {
      value: string;
      hash: string;
    }
  }

  class Redlock4 extends EventEmitter {
    constructor(clients: Redlock4.Client[], options?: Redlock4.Options);
    static LockError: new (message?: string) => Error;
    readonly scripts: { lockScript: Redlock4.Script; unlockScript: Redlock4.Script; extendScript: Redlock4.Script };
    lock(resource: string | string[], ttl: number): Promise<Redlock4.Lock>;
    unlock(lock: Redlock4.Lock): Promise<void>;
    extend(lock: Redlock4.Lock, ttl: number): Promise<Redlock4.Lock>;
  }

  export = Redlock4;
}
