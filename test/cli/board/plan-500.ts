import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TOOL_DECLARATIONS } from '../../../src/core/tools/declarations.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * A workspace of `n` files that use `fetchData` and a plan with one rename directive per file,
 * on the emulator's refactor model with no latency: a real fan-out of `n` forks whose
 * prefix stays small (the demo's grows with its grep output, and is slower to emulate).
 */
export function renamePlan(n: number): { dir: string; plan: string; files: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'fc-board-'));
  mkdirSync(join(dir, 'src'));
  const files = Array.from({ length: n }, (_, i) => `src/f${String(i + 1).padStart(3, '0')}.ts`);
  for (const file of files) writeFileSync(join(dir, file), `export const value = fetchData('${file}');\n`);
  const parent = {
    ...(JSON.parse(readFileSync(join(ROOT, 'examples/plan/parent.json'), 'utf8')) as Record<string, unknown>),
    tools: TOOL_DECLARATIONS,
  };
  const plan = join(dir, 'plan.json');
  writeFileSync(
    plan,
    JSON.stringify({
      parent,
      directives: files.map((f) => `rename fetchData to loadData in ${f}`),
      workspace: '.',
      runDir: 'runs',
      emulator: { script: 'refactor', latency: 'off' },
    }),
  );
  return { dir, plan, files };
}
