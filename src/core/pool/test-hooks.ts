import { z } from 'zod';
import { parseOrThrow } from '../util/validation.ts';

/**
 * Faults for tests only: one fork's worker thread exits (`exit`) or runs out of memory
 * (`out-of-memory`, with `pool.resourceLimits`) once a turn and its tools are done.
 *
 * Not an option of the public API: a worker that kills itself is no feature. It travels under
 * a symbol key that no public module exports (`Symbol()`, not `Symbol.for`), so only code that
 * imports this file can set it.
 */
export interface TestHooks {
  exitWorker?: { forkIndex: number; afterTurn: number; how?: 'exit' | 'out-of-memory' };
}

const TEST_HOOKS = Symbol('forkcache.testHooks');

const testHooksSchema = z.strictObject({
  exitWorker: z
    .strictObject({
      forkIndex: z.number().int().nonnegative(),
      afterTurn: z.number().int().positive(),
      how: z.enum(['exit', 'out-of-memory']).optional(),
    })
    .optional(),
});

/** Engine options carrying test hooks (for `ForkEngine.create`). Generic: the pool does not know the engine's options. */
export function withTestHooks<T extends object>(options: T, hooks: TestHooks): T {
  return { ...options, [TEST_HOOKS]: hooks } as T;
}

/** The validated test hooks of engine options (`{}` without any). */
export function testHooksOf(options: object): TestHooks {
  const hooks = (options as { [TEST_HOOKS]?: unknown })[TEST_HOOKS];
  return hooks === undefined ? {} : (parseOrThrow(testHooksSchema, hooks, 'INVALID_OPTION', 'test hooks') as TestHooks);
}
