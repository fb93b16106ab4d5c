import type { Command } from 'commander';
import { z } from 'zod';
import { startEmulator } from '../../emulator/server/start.ts';
import { ForkEngine } from '../../engine/engine.ts';
import { ForkcacheError } from '../../errors.ts';
import { parseFlags } from '../flags.ts';
import { loadPlan } from '../plan.ts';
import { ProgressBoard } from '../progress-board.ts';
import { formatFanOutResult, jsonSummary } from '../summary-table.ts';
import { reportAfterRun, reportFlag } from './report.ts';

const optionsSchema = z.object({
  api: z.enum(['auto', 'anthropic', 'emulator'], { error: 'expected auto, anthropic or emulator' }).default('auto'),
  json: z.boolean().default(false),
  parentFromClaudeTranscript: z.string().min(1, 'expected a .jsonl file').optional(),
  report: reportFlag,
});

/** Where requests go: the real API with a key, the embedded emulator without one. */
async function endpoint(api: 'auto' | 'anthropic' | 'emulator', emulatorOptions: { script: string; latency: 'off' | 'fast' | 'realistic' }) {
  const key = process.env['ANTHROPIC_API_KEY'];
  if (api === 'anthropic' && !key) {
    throw new ForkcacheError('INVALID_ARGUMENT', '--api anthropic: ANTHROPIC_API_KEY is not set');
  }
  if (api === 'anthropic' || (api === 'auto' && key)) {
    return { baseURL: process.env['ANTHROPIC_BASE_URL'] ?? 'https://api.anthropic.com', apiKey: key!, label: 'the Anthropic API', close: async () => {} };
  }
  const emulator = await startEmulator({ script: emulatorOptions.script, latency: emulatorOptions.latency });
  return { baseURL: emulator.url, apiKey: 'emulator', label: `the embedded emulator at ${emulator.url} (script ${emulatorOptions.script}; no ANTHROPIC_API_KEY)`, close: () => emulator.close() };
}

/** Register `forkcache run PLAN.json`. */
export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description('fan out the directives of a plan file over its parent snapshot')
    .argument('<plan>', 'plan JSON file: { parent, directives, workspace?, model?, warm?, layout?, limits?, allow? }')
    .option('--api <target>', 'auto (the real API when ANTHROPIC_API_KEY is set, else the emulator) | anthropic | emulator', 'auto')
    .option('--json', 'print one JSON summary object last')
    .option('--parent-from-claude-transcript <file>', 'rebuild the parent from a Claude Code session transcript (.jsonl); the plan then has no "parent"')
    .option('--report [file]', 'write the HTML report of the run (default: report.html in the fan-out directory)')
    .action(async (planPath: string, raw: Record<string, unknown>) => {
      const opts = parseFlags(optionsSchema, raw);
      const { plan, snapshot, workspace, runDir, notes } = loadPlan(planPath, { claudeTranscript: opts.parentFromClaudeTranscript });
      const log = (line: string): void => void process.stderr.write(`${line}\n`);
      for (const note of notes) log(`parent: ${note}`);
      const target = await endpoint(opts.api, plan.emulator);
      log(`forkcache run: ${plan.directives.length} forks of ${snapshot.model} against ${target.label}`);
      const engine = await ForkEngine.create({
        baseURL: target.baseURL,
        apiKey: target.apiKey,
        workspace,
        runDir,
        warm: plan.warm,
        layout: plan.layout,
        ...(plan.allow ? { allow: plan.allow } : {}),
        ...(plan.limits.maxTurns ? { maxTurns: plan.limits.maxTurns } : {}),
        ...(plan.limits.maxTokens ? { maxTokens: plan.limits.maxTokens } : {}),
        ...(plan.limits.concurrency ? { concurrency: plan.limits.concurrency } : {}),
        pool: { maxThreads: plan.limits.maxThreads ?? 2 },
      });
      try {
        // the manifest remembers the emulator script, so `forkcache resume` answers the same way
        const fan = engine.fanOut(snapshot, plan.directives, { meta: { emulator: plan.emulator } });
        const board = new ProgressBoard({ model: snapshot.model, plain: opts.json });
        for await (const event of fan) board.onEvent(event);
        board.stop();
        const result = await fan.settled();
        const report = reportAfterRun(result.summary.run_dir, opts.report, log);
        const extra = { api: opts.api === 'emulator' || target.apiKey === 'emulator' ? 'emulator' : 'anthropic', ...(report.path ? { report: report.path } : {}) };
        if (opts.json) process.stdout.write(`${JSON.stringify(jsonSummary(result, extra))}\n`);
        else process.stdout.write(`\n${formatFanOutResult(result, snapshot.model)}\n`);
        process.exitCode = result.forks.every((f) => f.status === 'completed') && !report.failed ? 0 : 1;
      } finally {
        await engine.close();
        await target.close();
      }
    });
}
