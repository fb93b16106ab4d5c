import { describe, expect, it } from 'vitest';
import { failureOf } from '../../../src/integrations/distributed/submit/in-flight.ts';

describe("failureOf: a job's failedReason as an error", () => {
  it("keeps a host's code, a retired one an older host sends too, and wraps anything else", () => {
    expect(failureOf('j1', 'FORK_MAX_TURNS: 40 turns')).toEqual({
      code: 'FORK_MAX_TURNS',
      message: 'job j1: 40 turns',
    });
    // a host of 0.6 or older still names its refusals INVALID_ARGUMENT
    expect(failureOf('j2', 'INVALID_ARGUMENT: directive: expected a string')).toEqual({
      code: 'INVALID_ARGUMENT',
      message: 'job j2: directive: expected a string',
    });
    expect(failureOf('j3', 'NOT_A_CODE: boom')).toMatchObject({
      code: 'FORK_WORKER_FAILED',
      message: 'job j3 failed: NOT_A_CODE: boom',
    });
  });
});
