import { describe, expect, it } from 'vitest';
import type { Command, Option } from 'commander';
import { createProgram } from '../../src/cli/program.ts';
import { COMMANDS } from '../../src/cli/commands/table.ts';
import { FLAGS, type FlagDef, parseCommandFlags, flagSchema } from '../../src/cli/flag-table.ts';
import { OPENAI_WIRE_FLAG } from '../../src/cli/commands/run.ts';
import { resumeAction, resumeOptionsSchema } from '../../src/cli/commands/resume.ts';
import { fanOutExitCode, type OutputSink } from '../../src/cli/commands/fan-out.ts';
import { parseFlags } from '../../src/cli/flags.ts';
import { ENGINE_SETTINGS, type SettingDecl } from '../../src/core/settings/engine-settings.ts';

// issue 46: one table of commands, each shared flag declared once (flag-table.ts)
const visible = (command: Command): Option[] => command.options.filter((o) => !o.hidden);
const byLong = new Map<string, FlagDef>(Object.values(FLAGS).map((d) => [d.spec.split(' ')[0]!, d]));

describe('the command table', () => {
  it('lists every command of `forkcache --help`, in its order', async () => {
    const program = await createProgram([]);
    expect(program.commands.map((c) => c.name())).toEqual(COMMANDS.map((row) => row.name));
  });

  it('gives every flag name one description across commands', async () => {
    const program = await createProgram([]);
    const descriptions = new Map<string, Set<string>>();
    for (const command of program.commands)
      for (const option of visible(command)) {
        const seen = descriptions.get(option.long!) ?? new Set();
        descriptions.set(option.long!, seen.add(option.description));
      }
    const many = [...descriptions].filter(([, d]) => d.size > 1).map(([name]) => name);
    expect(many).toEqual([]);
    expect(descriptions.get('--json')!.size).toBe(1);
  });

  it('takes every shared flag from its one definition: the same spelling and description in every command', async () => {
    const program = await createProgram([]);
    let shared = 0;
    for (const command of program.commands)
      for (const option of visible(command)) {
        const def = byLong.get(option.long!);
        if (def === undefined) continue;
        shared += 1;
        expect(option.flags, `${command.name()} ${option.long}`).toBe(def.spec);
        expect(option.description, `${command.name()} ${option.long}`).toBe(def.description);
      }
    expect(shared).toBeGreaterThan(40);
  });

  it("names each engine setting's flag as a command declares it, and a flag over a setting's plan field names that setting", async () => {
    const program = await createProgram([]);
    const declared = new Set(program.commands.flatMap((c) => visible(c).map((o) => o.long!)));
    const settings = Object.entries(ENGINE_SETTINGS) as Array<[string, SettingDecl]>;
    const named = settings.filter(([, decl]) => decl.flag !== undefined);
    expect(named.map(([name]) => name)).toEqual(expect.arrayContaining(['isolation', 'sparseWorktrees', 'maxUsd']));
    for (const [name, decl] of named) expect(declared.has(decl.flag!), `${name}: ${decl.flag}`).toBe(true);
    for (const def of Object.values(FLAGS) as FlagDef[]) {
      const over = settings.find(([, decl]) => decl.plan !== undefined && decl.plan === def.planField);
      if (over) expect(over[1].flag, `${def.spec}: the setting ${over[0]}`).toBe(def.spec.split(' ')[0]);
    }
  });

  it('maps every option of run to the plan field it overrides, or says why it has none', async () => {
    const program = await createProgram(['run']);
    const run = program.commands.find((c) => c.name() === 'run')!;
    const unjustified = visible(run)
      .map((o) => [o.long!, o.long === '--openai-wire' ? OPENAI_WIRE_FLAG : byLong.get(o.long!)] as const)
      .filter(([, def]) => def === undefined || (def.planField === undefined && def.justification === undefined))
      .map(([name]) => name);
    expect(unjustified).toEqual([]);
    expect(visible(run).length).toBeGreaterThanOrEqual(15);
  });

  it('spells every duration in milliseconds, its name ending in -ms', async () => {
    const program = await createProgram([]);
    const durations = program.commands.flatMap((c) =>
      visible(c)
        .filter((o) => /<ms>/.test(o.flags) || /-(timeout|wait)\b/.test(o.long!))
        .map((o) => o.long!),
    );
    expect(durations.length).toBeGreaterThan(3);
    expect(durations.filter((name) => !name.endsWith('-ms'))).toEqual([]);
  });
});

describe('hidden aliases', () => {
  it('fold an old spelling into the flag it was renamed to, winning over a default', () => {
    const schema = flagSchema(['headersTimeoutMs', 'host']);
    expect(
      parseCommandFlags(schema, { headersTimeout: '500' }, { '--headers-timeout <ms>': 'headersTimeoutMs' }),
    ).toEqual({
      headersTimeoutMs: 500,
      host: '127.0.0.1',
    });
    expect(() =>
      parseCommandFlags(schema, { headersTimeout: '0' }, { '--headers-timeout <ms>': 'headersTimeoutMs' }),
    ).toThrow('--headers-timeout-ms: at least 1 (got "0")');
  });
});

describe('run and resume, one action', () => {
  it('exit with 130 after Ctrl-C, 3 at a cap, 1 for work not done, else the worst integration', () => {
    expect(fanOutExitCode([{ failed: 1, spendCap: true }], true)).toBe(130);
    expect(
      fanOutExitCode(
        [
          { failed: 1, spendCap: false },
          { failed: 0, spendCap: true },
        ],
        false,
      ),
    ).toBe(3);
    expect(fanOutExitCode([{ failed: 1, spendCap: false, integrationCode: 5 }], false)).toBe(1);
    expect(
      fanOutExitCode(
        [
          { failed: 0, spendCap: false, integrationCode: 4 },
          { failed: 0, spendCap: false },
        ],
        false,
      ),
    ).toBe(4);
    expect(fanOutExitCode([], false)).toBe(0);
  });

  it('resume is a function of its options and a sink: called without a process, a missing run directory is bad input', async () => {
    const lines: string[] = [];
    const sink: OutputSink = { out: (t) => lines.push(t), err: (l) => lines.push(l) };
    const opts = parseFlags(resumeOptionsSchema, {});
    await expect(resumeAction('/nonexistent/forkcache-runs', opts, sink)).rejects.toMatchObject({
      code: 'INVALID_RUN_DIR',
    });
    expect(lines).toEqual([]);
  });
});
