import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import type { PermissionRequest } from '../../../src/core/tools/permissions.ts';
import { bigSnapshot, sharedEmulator, workspace } from './helpers.ts';

const emulator = sharedEmulator({ script: 'refactor' });

const FILES = { 'a.ts': 'export const fetchData = 1;\n', 'b.ts': 'export const fetchData = 2;\n' };
const DIRECTIVES = ['rename fetchData to loadData in a.ts', 'rename fetchData to loadData in b.ts'];

describe('permission policy', () => {
  it('ask bubbles from the worker to the embedder callback, which decides per call', async () => {
    const ws = workspace(FILES);
    const asked: PermissionRequest[] = [];
    const engine = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      workspace: ws,
      pool: { maxThreads: 2 },
      permissions: { tools: { edit_file: 'ask' } },
      onPermission: (request) => {
        asked.push(request);
        const path = (request.input as { path: string }).path;
        return path === 'a.ts' ? true : { allow: false, reason: 'b.ts is frozen' };
      },
    });
    try {
      const fan = engine.fanOut(bigSnapshot(`perm-${Date.now()}`), DIRECTIVES);
      const codes: (string | undefined)[] = [];
      for await (const e of fan) if (e.type === 'tool-call' && e.name === 'edit_file') codes.push(e.code);
      const { forks } = await fan.settled();
      expect(asked.map((r) => [r.forkId, r.tool])).toEqual(
        expect.arrayContaining([
          [forks[0]!.forkId, 'edit_file'],
          [forks[1]!.forkId, 'edit_file'],
        ]),
      );
      expect(asked).toHaveLength(2); // read_file was never asked about: the policy allows it
      expect(codes.sort()).toEqual(['PERMISSION_DENIED', undefined].sort());
      expect(readFileSync(join(ws, 'a.ts'), 'utf8')).toContain('loadData');
      expect(readFileSync(join(ws, 'b.ts'), 'utf8')).toContain('fetchData');
      expect(forks[1]!.report?.issues).toMatch(/Permission denied for edit_file: b\.ts is frozen/);
      expect(forks[1]!.filesChanged).toEqual([]);
    } finally {
      await engine.close();
    }
  });

  it('deny refuses without asking; ask with nobody to ask means no', async () => {
    const ws = workspace(FILES);
    const engine = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      workspace: ws,
      pool: { maxThreads: 1 },
      permissions: { default: 'ask', tools: { read_file: 'deny' } },
    });
    try {
      const fan = engine.fanOut(bigSnapshot(`deny-${Date.now()}`), DIRECTIVES.slice(0, 1));
      const calls: [string, string | undefined][] = [];
      for await (const e of fan) if (e.type === 'tool-call') calls.push([e.name, e.code]);
      const { forks } = await fan.settled();
      expect(calls).toEqual([['read_file', 'PERMISSION_DENIED']]);
      expect(forks[0]!.report?.issues).toMatch(/denied by the permission policy/);
      expect(readFileSync(join(ws, 'a.ts'), 'utf8')).toContain('fetchData');
    } finally {
      await engine.close();
    }
  });

  it('rejects a malformed policy, naming the field', async () => {
    await expect(ForkEngine.create({ permissions: { tools: { edit_file: 'maybe' as 'ask' } } })).rejects.toThrow(
      /permissions\.tools\.edit_file/,
    );
  });
});
