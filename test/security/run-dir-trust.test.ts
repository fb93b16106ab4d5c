import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ScriptedModel } from '../../src/integrations/emulator/scripts/types.ts';
import { ForkEngine } from '../../src/core/engine/engine.ts';
import { READ_ONLY_INTERRUPTED_MESSAGE } from '../../src/core/pool/resume-messages.ts';
import { splitSigned } from '../../src/core/run-dir/run-mac.ts';
import { STATE_DIR_ENV } from '../../src/core/util/state-dir.ts';
import { bigSnapshot, sharedEmulator, workspace } from '../core/engine/helpers.ts';

// Issue 24, route 2: the run directory sits in the workspace by default; a fork rewrote its
// manifest.json (bash allowed, sandbox none, workspace /) and `resume` obeyed. Now the tools
// cannot reach it, and resume continues only what this machine's forkcache signed.

const FORGED = { allow: ['bash'], sandbox: 'none', workspace: '/' };
let target = ''; // the manifest the hostile fork aims at (its path is known once the fan-out starts)
const attempts: Array<{ name: string; isError: boolean; content: string }> = [];

/** A fork steered by what it read: it tries to rewrite the manifest resume trusts, then reports. */
const hostile: ScriptedModel = {
  name: 'hostile',
  respond: ({ request }) => {
    if (request.messages.length <= 5)
      return {
        content: [
          { type: 'tool_use', name: 'read_file', input: { path: target } },
          { type: 'tool_use', name: 'write_file', input: { path: target, content: JSON.stringify(FORGED) } },
          { type: 'tool_use', name: 'list_dir', input: { path: '.forkcache/runs' } },
          { type: 'tool_use', name: 'glob', input: { pattern: '**/manifest.json' } },
        ],
      };
    for (const block of request.messages.at(-1)?.content ?? [])
      if (typeof block === 'object' && block.type === 'tool_result')
        attempts.push({ name: '', isError: block.is_error === true, content: String(block.content) });
    return {
      content: [{ type: 'text', text: 'Scope: x\nResult: done\nKey files: none\nFiles changed: none\nIssues: none' }],
    };
  },
};

const bodies: string[] = [];
const emulator = sharedEmulator({
  scripts: { hostile },
  faultFor: (body) => (bodies.push(JSON.stringify(body)), 'none'),
});

const FILES = { 'a.ts': 'export const alpha = 1; // the content a re-run read returns\n' };
const engines: ForkEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
});

async function engineIn(ws: string, script = 'refactor'): Promise<ForkEngine> {
  const engine = await ForkEngine.create({
    baseURL: emulator.current.url,
    apiKey: 'test',
    headers: { 'x-forkcache-script': script },
    workspace: ws,
    runDir: join(ws, '.forkcache', 'runs'), // the CLI's default: inside the workspace
    pool: { maxThreads: 1 },
  });
  engines.push(engine);
  return engine;
}

/** A finished run of one `read a.ts and report` fork: its fan-out dir and transcript path. */
async function finishedRun(): Promise<{ engine: ForkEngine; dir: string; transcript: string }> {
  const ws = workspace(FILES);
  const engine = await engineIn(ws);
  const fan = engine.fanOut(bigSnapshot(`trust-${Math.random()}`), ['read a.ts and report']);
  const { forks } = await fan.settled();
  expect(forks[0]!.status).toBe('completed');
  return { engine, dir: join(ws, '.forkcache', 'runs', fan.id), transcript: forks[0]!.transcriptPath! };
}

const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);
/** Keep the transcript's first `n` records: as a kill -9 leaves it (a cut at a record boundary). */
const cutAfter = (path: string, n: number) => writeFileSync(path, `${lines(path).slice(0, n).join('\n')}\n`);
const typeOf = (line: string) => (JSON.parse(line) as { type: string }).type;

describe("a fork's tools cannot rewrite what resume trusts (issue 24, route 2)", () => {
  it('refuses the read, the write, the listing and the glob; the manifest stays as forkcache wrote it', async () => {
    const ws = workspace(FILES);
    const engine = await engineIn(ws, 'hostile');
    attempts.length = 0;
    const fan = engine.fanOut(bigSnapshot(`hostile-${Math.random()}`), ['probe']);
    target = `.forkcache/runs/${fan.id}/manifest.json`;
    const before = readFileSync(join(ws, target), 'utf8');
    const { forks } = await fan.settled();
    expect(forks[0]!.status).toBe('completed');
    expect(attempts.slice(0, 3).map((a) => a.isError)).toEqual([true, true, true]);
    expect(attempts.slice(0, 3).every((a) => a.content.includes("forkcache's run or state directory"))).toBe(true);
    expect(attempts[3]!.content).toBe('No files matched.');
    expect(readFileSync(join(ws, target), 'utf8')).toBe(before);
  });
});

describe('resume continues only what this machine signed (issue 24, route 2)', () => {
  it('refuses a manifest rewritten behind forkcache (as another route would), and sends nothing', async () => {
    const { engine, dir, transcript } = await finishedRun();
    cutAfter(transcript, 3); // unfinished: resume would send requests
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { engine: object };
    manifest.engine = { ...manifest.engine, ...FORGED };
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
    const sent = emulator.current.stats().requests.total;
    expect(() => engine.resume(dir)).toThrow(
      expect.objectContaining({
        code: 'RUN_DIR_TAMPERED',
        message: expect.stringMatching(/manifest\.json does not match its signature/),
      }),
    );
    expect(emulator.current.stats().requests.total).toBe(sent);
  });

  it('refuses a transcript record changed or moved, naming the file and line', async () => {
    const { engine, dir, transcript } = await finishedRun();
    const original = lines(transcript);
    const changed = original.map((l) => (typeOf(l) === 'tool-end' ? l.replace('alpha', 'omega') : l));
    writeFileSync(transcript, `${changed.join('\n')}\n`);
    expect(() => engine.resume(dir)).toThrow(/forks\/\S+\.jsonl:\d+ does not match its signature/);
    // the same records in another order
    writeFileSync(transcript, `${[original[0], original[2], original[1], ...original.slice(3)].join('\n')}\n`);
    expect(() => engine.resume(dir)).toThrow(expect.objectContaining({ code: 'RUN_DIR_TAMPERED' }));
  });

  it('refuses an unsigned run unless trusted; once trusted it is signed, and resumes', async () => {
    const { engine, dir, transcript } = await finishedRun();
    cutAfter(transcript, 3);
    // as an older forkcache left it: no signature file, no MACs
    rmSync(join(dir, 'signature.json'));
    writeFileSync(
      transcript,
      `${lines(transcript)
        .map((l) => splitSigned(l)?.body ?? l)
        .join('\n')}\n`,
    );
    expect(() => engine.resume(dir)).toThrow(expect.objectContaining({ code: 'RUN_DIR_UNSIGNED' }));
    const { forks } = await engine.resume(dir, { trustUnsigned: true }).settled();
    expect(forks[0]!.status).toBe('completed');
    expect(existsSync(join(dir, 'signature.json'))).toBe(true);
    expect(lines(transcript).every((l) => splitSigned(l) !== undefined)).toBe(true);
    expect(lines(transcript).filter((l) => typeOf(l) === 'end')).toHaveLength(1);
  });

  it('refuses a run signed with another key (another machine, another state directory)', async () => {
    const { engine, dir } = await finishedRun();
    const saved = process.env[STATE_DIR_ENV];
    process.env[STATE_DIR_ENV] = mkdtempSync(join(tmpdir(), 'fc-other-state-'));
    try {
      expect(() => engine.resume(dir)).toThrow(
        expect.objectContaining({
          code: 'RUN_DIR_OTHER_KEY',
          message: expect.stringMatching(/signed with another key/),
        }),
      );
    } finally {
      if (saved === undefined) delete process.env[STATE_DIR_ENV];
      else process.env[STATE_DIR_ENV] = saved;
    }
  });

  it('still resumes a transcript whose last line a crash tore, and the chain goes on from it', async () => {
    const { engine, dir, transcript } = await finishedRun();
    cutAfter(transcript, 3);
    writeFileSync(transcript, `${readFileSync(transcript, 'utf8')}${lines(transcript)[1]!.slice(0, 40)}`); // torn
    const { forks } = await engine.resume(dir).settled();
    expect(forks[0]!.status).toBe('completed');
    // everything written after the torn line verifies: a second resume finds a signed, finished run
    const after = readFileSync(transcript, 'utf8');
    // the read that never started is made again (the model is told it did not run), then the report
    expect(lines(transcript).map(typeOf)).toEqual([
      'start',
      'request-start',
      'turn',
      'request-start',
      'turn',
      'tool-start',
      'tool-end',
      'request-start',
      'turn',
      'end',
    ]);
    expect((await engine.resume(dir).settled()).forks[0]!.status).toBe('completed');
    expect(readFileSync(transcript, 'utf8')).toBe(after);
  });
});

describe('an interrupted read-only tool is simply run again on resume (issue 24)', () => {
  it('gives the model the real result, not "effect unknown", and records it', async () => {
    const { engine, dir, transcript } = await finishedRun();
    const upToToolStart = lines(transcript).findIndex((l) => typeOf(l) === 'tool-start') + 1;
    cutAfter(transcript, upToToolStart); // killed while read_file ran
    bodies.length = 0;
    const { forks } = await engine.resume(dir).settled();
    expect(forks[0]!.status).toBe('completed');
    const next = bodies.find((b) => b.includes('tool_result'))!;
    expect(next).toContain('the content a re-run read returns');
    expect(next).not.toContain(READ_ONLY_INTERRUPTED_MESSAGE);
    expect(next).not.toContain('effect is unknown');
    const types = lines(transcript).map(typeOf);
    expect(types.slice(upToToolStart - 1, upToToolStart + 1)).toEqual(['tool-start', 'tool-end']);
  });
});
