import { existsSync, realpathSync } from 'node:fs';
import { mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForkcacheError } from '../../../src/core/util/errors.ts';
import { WorkspaceJail } from '../../../src/core/tools/jail/jail.ts';
import { isInside } from '../../../src/core/tools/jail/protected-paths.ts';
import { makeSandbox, type Sandbox } from './helpers.ts';

let sandbox: Sandbox;
let jail: WorkspaceJail;
let realOutside: string;

beforeAll(async () => {
  sandbox = await makeSandbox();
  await sandbox.put('a/b/file.txt', 'x');
  await sandbox.put('top.txt', 'x');
  await mkdir(`${sandbox.outside}/sub`);
  const ws = sandbox.workspace;
  await symlink(sandbox.outside, `${ws}/out`); // directory leaving the workspace
  await symlink(`${sandbox.outside}/secret.txt`, `${ws}/leak`); // file leaving it
  await symlink('..', `${ws}/a/up`); // relative link to the root: inside
  await symlink('../..', `${ws}/a/b/up2`); // relative link to the root: inside
  await symlink('../../..', `${ws}/a/b/up3`); // one level above the root: outside
  await symlink(`${sandbox.base}/nowhere`, `${ws}/dangling`);
  await symlink('loop', `${ws}/loop`);
  await symlink(ws, `${sandbox.base}/alias`); // the workspace under another name
  jail = new WorkspaceJail(sandbox.workspace);
  realOutside = realpathSync(sandbox.outside);
});
afterAll(() => sandbox.cleanup());

const segment = fc.constantFrom(
  '..',
  '.',
  '',
  'a',
  'b',
  'file.txt',
  'top.txt',
  'new',
  'out',
  'leak',
  'up',
  'up2',
  'up3',
  'dangling',
  'loop',
  'sub',
  'secret.txt',
  'ws',
  'outside',
  'alias',
);

/** Relative paths, or absolute ones starting at `/`, the sandbox base, the alias or the outside. */
const pathString = fc
  .tuple(
    fc.constantFrom('', '/', 'base', 'alias', 'outside', 'root'),
    fc.array(segment, { minLength: 0, maxLength: 8 }),
  )
  .map(([start, parts]) => {
    const tail = parts.join('/');
    if (start === '' || start === '/') return start + tail;
    const prefix = { base: sandbox.base, alias: `${sandbox.base}/alias`, outside: sandbox.outside, root: jail.root }[
      start
    ];
    return tail === '' ? (prefix as string) : `${prefix as string}/${tail}`;
  });

/** Walk up to the first existing ancestor and return its realpath. */
function realOfExistingPart(p: string): string {
  let current = p;
  while (!existsSync(current)) current = path.dirname(current);
  return realpathSync(current);
}

describe('WorkspaceJail (property)', () => {
  it('either refuses a path or resolves it inside the workspace realpath, never outside', async () => {
    const outcomes = { accepted: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(pathString, fc.constantFrom('existing' as const, 'create' as const), async (input, mode) => {
        let resolved;
        try {
          resolved = await jail.resolve(input, mode);
        } catch (err) {
          expect(err).toBeInstanceOf(ForkcacheError);
          expect((err as ForkcacheError).code).toMatch(/^TOOL_(PATH_ESCAPE|NOT_FOUND|INPUT_INVALID)$/);
          outcomes.refused += 1;
          return;
        }
        outcomes.accepted += 1;
        expect(isInside(jail.root, resolved.real), `${input} -> ${resolved.real}`).toBe(true);
        expect(isInside(realOutside, resolved.real)).toBe(false);
        // What the kernel will see when a tool uses `real`: still inside, no link left to follow.
        const kernel = realOfExistingPart(resolved.real);
        expect(isInside(jail.root, kernel), `${input}: ${kernel}`).toBe(true);
        if (resolved.exists) expect(realpathSync(resolved.real)).toBe(resolved.real);
        if (mode === 'existing') expect(resolved.exists).toBe(true);
      }),
      { numRuns: 400 },
    );
    // Both sides of the property were exercised, not just refusals. The runs are random: about
    // one path in six is accepted (40 of 400 came up once), so the bound is far in the tail.
    expect(outcomes.accepted).toBeGreaterThan(10);
    expect(outcomes.refused).toBeGreaterThan(10);
  });

  it('resolves the sample paths the property relies on as expected', async () => {
    // Guards the generator against a setup mistake that would make every path trivially refused.
    expect((await jail.resolve('a/up/a/b/up2/top.txt', 'existing')).relative).toBe('top.txt');
    expect((await jail.resolve(`${jail.root}/a/b/file.txt`, 'existing')).relative).toBe('a/b/file.txt');
    // Another name of the workspace is not the workspace: lexically outside, refused.
    await expect(jail.resolve(`${sandbox.base}/alias/a/b/file.txt`, 'existing')).rejects.toMatchObject({
      code: 'TOOL_PATH_ESCAPE',
    });
    await expect(jail.resolve('a/b/up3/outside/secret.txt', 'existing')).rejects.toMatchObject({
      code: 'TOOL_PATH_ESCAPE',
    });
  });
});
