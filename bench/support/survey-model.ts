import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findForkDirective, toolExchanges } from '../../src/integrations/emulator/scripts/conversation.ts';
import { formatReport } from '../../src/integrations/emulator/scripts/directive.ts';
import { SCRIPT_HEADER, type ScriptedModel, type ScriptedTurn } from '../../src/integrations/emulator/scripts/types.ts';
import type { Clock } from '../../src/core/util/clock.ts';
import { ForkEngine } from '../../src/index.ts';
import { withBenchOptions } from '../../src/core/engine/bench-options.ts';
import type { WarmStrategy } from '../../src/core/settings/engine-settings.ts';
import type { MarkerStrategy } from '../../src/core/prefix/freeze.ts';

/** Name of the bench's scripted model (select it with the `x-forkcache-script` header). */
export const SURVEY_SCRIPT = 'survey';

/** Directories the survey model lists, one per tool turn: two tool turns, then the report. */
const SURVEY_DIRS = ['.', 'src'] as const;

/**
 * `survey`: a 3-turn stand-in for a fork that explores before it answers — `list_dir .`,
 * `list_dir src`, then a report. Stateless: the step is the number of tool calls made since
 * the fork's directive, so the same conversation always gets the same turn and every run of
 * the bench sends byte-identical requests.
 */
export const surveyModel: ScriptedModel = {
  name: SURVEY_SCRIPT,
  respond({ request }): ScriptedTurn {
    const fork = findForkDirective(request.messages);
    const done = fork ? toolExchanges(request.messages, fork.message) : [];
    const next = SURVEY_DIRS[done.length];
    if (fork && next !== undefined) return { content: [{ type: 'tool_use', name: 'list_dir', input: { path: next } }] };
    const entries = done.reduce((n, e) => n + (e.result?.text.split('\n').length ?? 0), 0);
    const text = formatReport({
      scope: fork?.directive ?? '(not a fork)',
      result: `listed ${done.length} directories, ${entries} entries`,
      keyFiles: [],
      filesChanged: [],
      issues: [],
    });
    return { content: [{ type: 'text', text }], stop_reason: 'end_turn' };
  },
};

/** Tool turns the survey model makes before its report (its requests per fork = this + 1). */
export const SURVEY_TOOL_TURNS = SURVEY_DIRS.length;

/** A small workspace for the survey model to list, in a new temp directory. */
export function surveyWorkspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fc-bench-ws-'));
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'README.md'), '# sample\n');
  writeFileSync(join(dir, 'package.json'), '{ "name": "sample" }\n');
  for (const name of ['http.ts', 'users.ts', 'orders.ts', 'index.ts'])
    writeFileSync(join(dir, 'src', name), `export const ${name.split('.')[0]} = 1;\n`);
  return dir;
}

/**
 * An engine for the economics sweeps: the survey model on the bench emulator, the given marker
 * and warm strategies, every fork dispatched at once (no request held by the API limit: only
 * the warm gate decides).
 */
export function surveyEngine(
  emulator: { url: string },
  clock: Clock,
  workspace: string,
  strategy: { markers: MarkerStrategy; warm: WarmStrategy },
  maxForks: number,
): Promise<ForkEngine> {
  return ForkEngine.create(
    withBenchOptions(
      {
        baseURL: emulator.url,
        apiKey: 'bench',
        headers: { [SCRIPT_HEADER]: SURVEY_SCRIPT },
        maxRetries: 0,
        workspace,
        warm: strategy.warm,
        clock,
        concurrency: 64,
        pool: { maxThreads: 2, concurrentTasksPerWorker: maxForks },
      },
      { markers: strategy.markers },
    ),
  );
}
