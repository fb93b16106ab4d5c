import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadPlan } from '../../src/cli/plan/plan.ts';
import { createProgram } from '../../src/cli/program.ts';
import { forkcache, lastJson } from './run-cli.ts';

/** The command tree in this process: its errors are thrown, not turned into exit codes. */
const inProcess = async (args: string[]): Promise<unknown> =>
  (await createProgram(args)).parseAsync(['node', 'forkcache', ...args]);

const RUN = 'test/fixtures/runs/fo001-e3a67061';
const TRANSCRIPT = 'test/fixtures/claude-code/session.jsonl';
const tmp = (): string => mkdtempSync(join(tmpdir(), 'fc-cli-report-'));

function plan(dir: string, extra: Record<string, unknown> = {}): string {
  const path = join(dir, 'plan.json');
  const directives = [
    'rename fetchData to loadData in src/lib/http.ts',
    'rename fetchData to loadData in src/features/users.ts',
  ];
  writeFileSync(
    path,
    JSON.stringify({
      directives,
      workspace: resolve('examples/sample-repo'),
      runDir: join(dir, 'runs'),
      emulator: { script: 'echo', latency: 'off' },
      ...extra,
    }),
  );
  return path;
}

describe('forkcache report', () => {
  it('writes the HTML file and says what it rendered (--json: one object)', async () => {
    const out = join(tmp(), 'r.html');
    const { code, stdout, stderr } = await forkcache(['report', RUN, '--out', out, '--json']);
    expect(code).toBe(0);
    expect(stderr).toBe(`report: run directory ${RUN}\n`);
    expect(lastJson(stdout)).toMatchObject({
      report: out,
      charts: 4,
      fanouts: ['fo001-e3a67061'],
      found: 1,
      scope: `run directory ${RUN}`,
    });
    expect(readFileSync(out, 'utf8')).toMatch(/^<!doctype html>/);
  });

  it('renders bench results with --bench', async () => {
    const out = join(tmp(), 'bench.html');
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      await inProcess(['report', '--bench', 'test/fixtures/bench/results.json', '--out', out]);
      expect(String(write.mock.calls.at(-1)![0])).toMatch(
        new RegExp(`^report written to ${out} \\(2 charts, [\\d,]+ bytes\\)\\n$`),
      );
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('is a usage error without RUN_DIR or --bench, or with both', async () => {
    await expect(inProcess(['report'])).rejects.toMatchObject({
      code: 'CLI_USAGE',
      message: expect.stringMatching(/report: missing RUN_DIR/),
    });
    await expect(inProcess(['report', RUN, '--bench', 'x.json'])).rejects.toMatchObject({
      code: 'CLI_USAGE',
      message: expect.stringMatching(/give RUN_DIR or --bench FILE, not both/),
    });
  });

  it('exits 2 on a malformed run file, naming it', async () => {
    const broken = join(tmp(), 'fo001-x');
    cpSync(RUN, broken, { recursive: true });
    writeFileSync(join(broken, 'summary.json'), '{"forks": ');
    const bad = await forkcache(['report', broken]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`${join(broken, 'summary.json')}: not valid JSON`);
    expect(existsSync(join(broken, 'report.html'))).toBe(false);
  });
});

describe('forkcache run --parent-from-claude-transcript', () => {
  it('forks from the imported session and writes the report with --report', async () => {
    const dir = tmp();
    const out = join(dir, 'report.html');
    const { code, stdout, stderr } = await forkcache([
      'run',
      plan(dir),
      '--parent-from-claude-transcript',
      TRANSCRIPT,
      '--json',
      '--report',
      out,
    ]);
    expect(stderr).toContain('parent: 2 sidechain record(s) (sub-agents) dropped');
    expect(code).toBe(0);
    const summary = lastJson(stdout);
    expect(summary.report).toBe(out);
    expect(summary.forks.completed).toBe(2);
    // The session's last assistant record reports its usage: that much the forks should read
    // (an emulator that never served the session has none of it: the share is what was read).
    expect(summary.parent_cache).toMatchObject({ expected_tokens: 14084, forks: 2 });
    expect(stderr).toContain('parent cache: the session should hold 14084 tokens of this prefix');
    // The echo model reports what reached it: the 4 imported messages + the fork's own turn.
    for (const fork of summary.fork_results)
      expect(fork.report.result).toMatch(
        /^echo: 5 message\(s\), 8 tool\(s\) declared, model claude-opus-5-5, fork child/,
      );
    const snapshot = JSON.parse(readFileSync(join(summary.run_dir, 'snapshot.json'), 'utf8'));
    expect(snapshot.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(readFileSync(out, 'utf8')).toContain('data-chart="timeline"');
  });

  it('needs the parent from exactly one place', () => {
    expect(() => loadPlan(plan(tmp(), { parent: 'parent.json' }), { claudeTranscript: TRANSCRIPT })).toThrow(
      expect.objectContaining({
        code: 'INVALID_PLAN',
        message: expect.stringMatching(/parent: remove it, or drop --parent-from-claude-transcript/),
      }),
    );
    expect(() => loadPlan(plan(tmp()))).toThrow(
      expect.objectContaining({
        code: 'INVALID_PLAN',
        message: expect.stringMatching(/parent: required .* unless --parent-from-claude-transcript is given/),
      }),
    );
    const loaded = loadPlan(plan(tmp(), { model: 'claude-opus-4-5' }), { claudeTranscript: TRANSCRIPT });
    expect(loaded.snapshot.model).toBe('claude-opus-4-5');
    // The hand-written fixture has no api-request records: the approximation is noted first.
    expect(loaded.notes).toHaveLength(4);
    expect(loaded.notes[0]).toMatch(/^no api-request records/);
    // A plan may name the transcript itself (relative to the plan), but not with a parent too.
    const named = loadPlan(plan(tmp(), { parentTranscript: resolve(TRANSCRIPT) }));
    expect(named.snapshot.messages).toEqual(loaded.snapshot.messages);
    expect(() => loadPlan(plan(tmp(), { parent: 'parent.json', parentTranscript: TRANSCRIPT }))).toThrow(
      /parent: remove it/,
    );
  });

  it('exits 2 on a malformed transcript, naming the line', async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'bad.jsonl'), '{"type":"user","message":{"role":"user","content":"hi"}}\n{oops\n');
    const bad = await forkcache(['run', plan(dir), '--parent-from-claude-transcript', join(dir, 'bad.jsonl')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`${join(dir, 'bad.jsonl')}:2: not valid JSON`);
  });
});
