import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TOOL_DECLARATIONS } from '../../src/core/tools/declarations.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A plan file for `forkcache run` on the embedded emulator's `refactor` model. */
export function writePlan(workspace: string, directives: string[], extra: Record<string, unknown> = {}): string {
  const parent = {
    ...(JSON.parse(readFileSync(join(ROOT, 'examples/plan/parent.json'), 'utf8')) as Record<string, unknown>),
    tools: TOOL_DECLARATIONS,
  };
  const dir = mkdtempSync(join(tmpdir(), 'fc-plan-'));
  const path = join(dir, 'plan.json');
  writeFileSync(
    path,
    JSON.stringify({
      parent,
      directives,
      workspace,
      runsDir: join(dir, 'runs'),
      emulator: { script: 'refactor', latency: 'off' },
      ...extra,
    }),
  );
  return path;
}

/** The (first) run directory of a plan `writePlan` wrote: its runs directory is `runs/` beside it. */
export function runDirOf(planPath: string): string {
  const runs = join(dirname(planPath), 'runs');
  const [dir] = readdirSync(runs).filter((d) => existsSync(join(runs, d, 'manifest.json')));
  return join(runs, dir!);
}
