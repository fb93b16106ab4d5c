import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TOOL_DECLARATIONS } from '../../src/core/tools/declarations.ts';
import { runNode } from './run-cli.ts';

// Issue 15, case 7: with dist/ not built (the state after `npm ci`), `run` from any directory
// but the package's died with "Cannot find package 'tsx'": workers resolved `--import tsx`
// from the cwd. They now name the loader by its URL, resolved from the package.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('source mode from another directory (issue 15, case 7)', () => {
  it.runIf(!existsSync(join(ROOT, 'dist/src/cli/main.js')))(
    'runs forks on worker threads when started from a directory without node_modules',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'fc-cwd-'));
      writeFileSync(join(dir, 'a.ts'), 'export const a = 1;\n');
      const parent = {
        ...(JSON.parse(readFileSync(join(ROOT, 'examples/plan/parent.json'), 'utf8')) as Record<string, unknown>),
        tools: TOOL_DECLARATIONS,
      };
      writeFileSync(
        join(dir, 'plan.json'),
        JSON.stringify({
          parent,
          directives: ['read a.ts and report'],
          emulator: { script: 'refactor', latency: 'off' },
        }),
      );
      const run = await runNode([join(ROOT, 'bin/forkcache.js'), 'run', 'plan.json', '--json'], {
        cwd: dir,
        // source mode as after `npm ci`: the workers load tsx, not the suite's build of the sources
        env: { ANTHROPIC_API_KEY: '', FORKCACHE_BUILT_SOURCES: undefined },
      });
      expect(run.stderr).not.toMatch(/Cannot find package/);
      expect(run.code).toBe(0);
      const summary = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { forks: { completed: number } };
      expect(summary.forks.completed).toBe(1);
    },
  );
});
