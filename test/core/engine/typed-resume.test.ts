import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { findForkDirective } from '../../../src/integrations/emulator/scripts/conversation.ts';
import type { ScriptedModel, ScriptedTurn } from '../../../src/integrations/emulator/scripts/types.ts';
import { startEmulator, type Emulator } from '../../../src/integrations/emulator/start.ts';
import { bigSnapshot, workspace } from './helpers.ts';

/*
 * A typed fan-out's output schema is kept for resume as its JSON Schema form: a fork that ended
 * `invalid_output` is retried by a new engine (as `forkcache resume` makes one) with nothing but
 * the run directory, and its new report is checked against the same schema.
 */

const triage = z.object({ ticket: z.string(), priority: z.enum(['low', 'high']) });

const report = (value: unknown): ScriptedTurn => ({
  content: [
    {
      type: 'text',
      text: `Scope: my part\nResult:\n\`\`\`json\n${JSON.stringify(value)}\n\`\`\`\nKey files: none\nFiles changed: none\nIssues: none`,
    },
  ],
  stop_reason: 'end_turn',
});

/** Part 1 matches; part 2 reports `priority` the schema refuses (`wrong`) until `fixed`, then `fixed`. */
function typedModel(): { model: ScriptedModel; part2: { value: unknown } } {
  const part2 = { value: { ticket: 'T-2', priority: 'urgent' } as unknown };
  const model: ScriptedModel = {
    name: 'typed-resume',
    respond({ request }) {
      const fork = findForkDirective(request.messages);
      if (!fork) return report('no fork');
      return /part 1 of/.test(fork.directive) ? report({ ticket: 'T-1', priority: 'high' }) : report(part2.value);
    },
  };
  return { model, part2 };
}

const open: { emu?: Emulator; engines: ForkEngine[] } = { engines: [] };
afterEach(async () => {
  for (const engine of open.engines.splice(0)) await engine.close();
  await open.emu?.close();
  delete open.emu;
});

async function engineOn(emu: Emulator, ws: string): Promise<ForkEngine> {
  const engine = await ForkEngine.create({
    baseURL: emu.url,
    apiKey: 'test',
    workspace: ws,
    runsDir: join(ws, 'runs'),
    pool: { maxThreads: 2 },
  });
  open.engines.push(engine);
  return engine;
}

describe('resume of a typed fan-out', () => {
  it('retries an invalid_output fork and checks its new report against the schema the manifest kept', async () => {
    const { model, part2 } = typedModel();
    open.emu = await startEmulator({ latency: 'off', scripts: [model], script: 'typed-resume' });
    const ws = workspace();
    const first = await engineOn(open.emu, ws);
    const fan = first.fanOut(bigSnapshot('typed-resume'), ['triage part 1 of 2', 'triage part 2 of 2'], {
      outputSchema: triage,
    });
    const ran = await fan.settled();
    expect(ran.forks.map((f) => f.status)).toEqual(['completed', 'invalid_output']);
    const dir = join(ws, 'runs', fan.id);
    // the JSON Schema form the children were shown, in the manifest
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { outputSchema?: unknown };
    expect(manifest.outputSchema).toEqual(z.toJSONSchema(triage, { target: 'draft-2020-12', io: 'output' }));

    // a report the schema still refuses: the recorded schema judges it, the fork stays invalid_output
    const second = await engineOn(open.emu, ws);
    const again = await second.resume(dir, { retry: ['invalid_output'] }).settled();
    expect(again.forks.map((f) => f.status)).toEqual(['completed', 'invalid_output']);
    expect(again.forks[1]).not.toHaveProperty('output');

    // a matching one: completed, its value the fork's output, checked on this engine's thread
    part2.value = { ticket: 'T-2', priority: 'low' };
    const third = await engineOn(open.emu, ws);
    const fixed = await third.resume(dir, { retry: ['invalid_output'] }).settled();
    expect(fixed.forks.map((f) => f.status)).toEqual(['completed', 'completed']);
    expect(fixed.forks[1]).toMatchObject({ output: { ticket: 'T-2', priority: 'low' } });
  });

  it('refuses to retry invalid_output forks when the run recorded no schema and none is passed', async () => {
    const { model } = typedModel();
    open.emu = await startEmulator({ latency: 'off', scripts: [model], script: 'typed-resume' });
    const ws = workspace();
    const engine = await engineOn(open.emu, ws);
    // a transform has no JSON Schema form: nothing can be recorded
    const opaque = triage.transform((v) => ({ ...v, seen: true }));
    const fan = engine.fanOut(bigSnapshot('typed-opaque'), ['triage part 1 of 2', 'triage part 2 of 2'], {
      outputSchema: opaque,
    });
    expect((await fan.settled()).forks.map((f) => f.status)).toEqual(['completed', 'invalid_output']);
    const dir = join(ws, 'runs', fan.id);
    expect(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'))).not.toHaveProperty('outputSchema');
    expect(() => engine.resume(dir, { retry: ['invalid_output'] })).toThrow(/retry: invalid_output forks need/);
    // passed again, it is the judge
    const resumed = await engine.resume(dir, { retry: ['invalid_output'], outputSchema: opaque }).settled();
    expect(resumed.forks.map((f) => f.status)).toEqual(['completed', 'invalid_output']);
  });
});
