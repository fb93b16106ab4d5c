// Type tests: compiled by `npm run typecheck` (tsc), never run. Each error code's `data` has its
// own shape: the constructor checks it, and a reader narrowing on `code` gets it.
import { expectTypeOf } from 'vitest';
import { ForkcacheError, isForkcacheError } from '../../src/core/util/errors.ts';
import { parseOrThrow } from '../../src/core/util/validation.ts';
import { readJsonFile } from '../../src/core/util/json-file.ts';
import { z } from 'zod';

// the constructor checks data against the code's shape
new ForkcacheError('SPEND_CAP_MAX_USD', 'capped', { data: { maxUsd: 1, spentUsd: 0.9, nextBoundUsd: 1.2 } });
// @ts-expect-error: SPEND_CAP_MAX_USD carries its figures, they cannot be left out
new ForkcacheError('SPEND_CAP_MAX_USD', 'capped');
// @ts-expect-error: a key the code does not carry
new ForkcacheError('SPEND_CAP_MAX_USD', 'capped', { data: { maxUsd: 1, spentUsd: 0.9, nextBoundUsd: 1, x: 1 } });
// @ts-expect-error: a value of the wrong type
new ForkcacheError('GIT_DIRTY_WORKTREE', 'dirty', { data: { files: 'a.ts' } });
// a code that may carry no data needs none
new ForkcacheError('ENGINE_CLOSED', 'closed');
// @ts-expect-error: ENGINE_CLOSED carries no data
new ForkcacheError('ENGINE_CLOSED', 'closed', { data: { why: 'x' } });
new ForkcacheError('INVALID_OPTION', 'maxUsd: bad', { data: { field: 'maxUsd' } });

// a reader narrows data by code
declare const caught: unknown;
if (isForkcacheError(caught) && caught.code === 'SPEND_CAP_MAX_USD')
  expectTypeOf(caught.data).toEqualTypeOf<Readonly<{ maxUsd: number; spentUsd: number; nextBoundUsd: number }>>();
if (isForkcacheError(caught) && caught.code === 'GIT_DIRTY_WORKTREE')
  expectTypeOf(caught.data.files).toEqualTypeOf<string[]>();

// a helper that adds its own data takes only the codes whose data it fits
parseOrThrow(z.string(), 'x', 'INVALID_PLAN', 'plan');
// @ts-expect-error: FORK_MAX_TURNS's data is not a schema's issues
parseOrThrow(z.string(), 'x', 'FORK_MAX_TURNS', 'turns');
readJsonFile('p.json', 'plan', 'INVALID_PLAN');
// @ts-expect-error: SPEND_CAP_MAX_USD's data is not a file's
readJsonFile('p.json', 'plan', 'SPEND_CAP_MAX_USD');
