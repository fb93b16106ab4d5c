import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readReportFiles } from '../../../src/integrations/report/run-files.ts';
import { buildRunModel } from '../../../src/integrations/report/run-model.ts';
import type { RunModel } from '../../../src/integrations/report/run-types.ts';
import { copyRun, editJsonl, FIXTURE_RUN } from './helpers.ts';

const load = (dir: string): RunModel => buildRunModel(readReportFiles(dir));
const segmentsOf = (model: RunModel, row: string) => model.segments.filter((s) => s.row === row);

describe('run model from a real run directory', () => {
  const model = load(FIXTURE_RUN);

  it('has every fork with its status, counts and parsed report', () => {
    expect(model.id).toBe('fo001-e3a67061');
    expect(model.forks.map((f) => f.short)).toEqual(['f01', 'f02', 'f03', 'f04', 'f05', 'f06', 'f07', 'f08']);
    for (const fork of model.forks) {
      expect(fork).toMatchObject({ status: 'completed', turns: 4, toolCalls: 3 });
      expect(fork.filesChanged).toHaveLength(1);
      expect(fork.report?.result).toMatch(/renamed \d+ occurrence/);
      expect(fork.report?.missing).toEqual([]);
    }
    expect(model.diagnostics).toEqual([]);
  });

  it("draws siblings warming until the warmer's response began, the warmer hardly at all", () => {
    const events = readFileSync(join(FIXTURE_RUN, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const t0 = events[0].at;
    const warmerBegan = events.find((e) => e.type === 'response-start' && e.forkId.endsWith('f01')).at - t0;
    const warming = (row: string) => segmentsOf(model, row).find((s) => s.phase === 'warming');
    expect(warming('f01')!.end - warming('f01')!.start).toBeLessThan(10);
    for (const row of ['f02', 'f03', 'f04', 'f05', 'f06', 'f07', 'f08']) {
      expect(warming(row)!.end).toBeGreaterThanOrEqual(warmerBegan);
      expect(warming(row)!.end - warming(row)!.start).toBeGreaterThan(warming('f01')!.end - warming('f01')!.start);
    }
    for (const row of model.rows) {
      const phases = segmentsOf(model, row).map((s) => s.phase);
      expect(phases.filter((p) => p === 'request')).toHaveLength(4);
      expect(phases[0]).toBe('queued');
      for (const s of segmentsOf(model, row)) expect(s.end).toBeLessThanOrEqual(model.durationMs);
    }
  });

  it('lists every request in the order sent, priced, and cheaper than without the cache', () => {
    expect(model.requests).toHaveLength(32);
    expect(model.requests.map((r) => r.sentAt)).toEqual([...model.requests.map((r) => r.sentAt)].sort((a, b) => a - b));
    expect(model.requests[0]!.label).toBe('f01 t1');
    const cost = model.requests.reduce((s, r) => s + r.cost!, 0);
    const noCache = model.requests.reduce((s, r) => s + r.noCache!, 0);
    expect(cost).toBeGreaterThan(0);
    expect(cost).toBeLessThan(model.files.summary!.cost_usd.actual!); // the parent's turns are not in events.jsonl
    expect(noCache).toBeGreaterThan(3 * cost);
  });
});

describe('diagnostics', () => {
  it('names a fork whose first request missed the shared prefix', () => {
    const { dir } = copyRun();
    editJsonl(join(dir, 'events.jsonl'), (r) => {
      if (r.type === 'turn-end' && r.forkId.endsWith('f03') && r.turn === 1) {
        r.request.usage.cache_read_input_tokens -= 1000;
        r.request.usage.input_tokens += 1000;
      }
      return r;
    });
    expect(load(dir).diagnostics).toEqual([
      expect.stringMatching(/^f03 t1: read 2,334 of 3,334 shared prefix tokens from cache \(missed 1,000/),
    ]);
  });

  it('reports prefix drift from fork-end errors and from transcripts naming another prefix', () => {
    const { dir } = copyRun();
    editJsonl(join(dir, 'events.jsonl'), (r) =>
      r.type === 'fork-end' && r.forkId.endsWith('f02')
        ? {
            ...r,
            status: 'failed',
            error: { code: 'FORK_PREFIX_DRIFT', message: 'body does not start with the frozen head' },
          }
        : r,
    );
    editJsonl(join(dir, 'forks', 'fo001-e3a67061-f05.jsonl'), (r) =>
      r.type === 'start' ? { ...r, prefixSha256: 'ab'.repeat(32) } : r,
    );
    const model = load(dir);
    expect(model.forks[1]!.status).toBe('failed');
    expect(model.diagnostics).toContain('f02: body does not start with the frozen head');
    expect(model.diagnostics).toContainEqual(
      expect.stringMatching(/^fo001-e3a67061-f05: transcript names prefix abababab/),
    );
  });
});

describe('tolerance and errors', () => {
  it('ignores record types and fields it does not know', () => {
    const { dir } = copyRun();
    editJsonl(join(dir, 'events.jsonl'), (r) => ({ ...r, newField: { nested: true } }));
    appendFileSync(
      join(dir, 'events.jsonl'),
      `${JSON.stringify({ type: 'cache-probe', at: 1, forkId: 'x' })}\n${JSON.stringify({ kind: 'no type at all' })}\n`,
    );
    appendFileSync(
      join(dir, 'forks', 'fo001-e3a67061-f01.jsonl'),
      `${JSON.stringify({ v: 2, type: 'checkpoint', data: [1, 2] })}\n`,
    );
    const base = load(FIXTURE_RUN);
    const model = load(dir);
    expect(model.segments).toEqual(base.segments);
    expect(model.requests).toEqual(base.requests);
    expect(model.forks).toEqual(base.forks);
  });

  it('closes a turn interrupted by a worker restart, and counts the restart', () => {
    const { dir } = copyRun();
    const path = join(dir, 'events.jsonl');
    const records = readFileSync(path, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const i = records.findIndex((r) => r.type === 'turn-start' && r.forkId.endsWith('f02') && r.turn === 2);
    const restartAt = records[i].at + 1;
    records.splice(
      i + 1,
      0,
      { type: 'fork-restart', forkId: records[i].forkId, at: restartAt, attempt: 1, turnsDone: 1, interrupted: [] },
      { ...records[i], at: restartAt + 1 },
    );
    writeFileSync(path, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const model = load(dir);
    const t0 = records[0].at;
    const requests = segmentsOf(model, 'f02').filter((s) => s.phase === 'request');
    expect(requests).toHaveLength(5);
    expect(requests[1]!.end).toBe(restartAt - t0);
    expect(requests[2]!.start).toBe(restartAt + 1 - t0);
    expect(model.forks[1]!.restarts).toBe(1);
    expect(segmentsOf(model, 'f03')).toEqual(segmentsOf(load(FIXTURE_RUN), 'f03'));
  });

  it('combines every pass of a resumed fan-out on one timeline, the gap between them left out (issue 27)', () => {
    const { dir } = copyRun();
    const text = readFileSync(join(dir, 'events.jsonl'), 'utf8');
    const records = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const first = records[0].at as number;
    const last = Math.max(...records.map((r) => r.at as number));
    // pass 2, an hour later: f01 runs its turns again; the others' ends are replayed (no fork-start)
    const later = 3_600_000;
    const resume = records
      .filter((r) => r.type === 'fanout-start' || r.forkId?.endsWith('f01') || r.type === 'fork-end')
      .filter((r) => r.type !== 'fork-end' || r.forkId.endsWith('f01') || true)
      .filter((r) => r.forkId?.endsWith('f01') || r.type === 'fanout-start' || r.type === 'fork-end')
      .map((r) => {
        const out = { ...r, at: r.at + later };
        if (out.request)
          out.request = {
            ...out.request,
            sentAt: out.request.sentAt + later,
            startedAt: out.request.startedAt + later,
            endedAt: out.request.endedAt + later,
          };
        return out;
      });
    writeFileSync(join(dir, 'events.jsonl'), text + resume.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const single = load(copyRun().dir);
    const model = load(dir);
    // before: "the report shows the last one" — f02…f08 gone, f01 done at t=0
    expect(model.forks).toHaveLength(single.forks.length);
    expect(model.files.passes.map((s) => s.index)).toEqual([1, 2]);
    expect(model.files.passes[1]!.startMs).toBe(last - first); // laid right after pass 1, not an hour later
    expect(model.durationMs).toBeLessThan(2 * (last - first) + 1);
    expect(model.files.notes.some((n) => n.startsWith('2 passes (the run and 1 resume), combined'))).toBe(true);
    const running = (row: string) => model.segments.filter((s) => s.row === row && s.phase === 'running');
    expect(running('f01')).toHaveLength(2);
    // a replayed end does not move a fork that finished in pass 1
    const f02 = (m: typeof model) => m.segments.find((s) => s.row === 'f02' && s.phase === 'running')!.end;
    expect(f02(model)).toBe(f02(single));
    const f01Turns = records.filter((r) => r.type === 'turn-end' && r.forkId.endsWith('f01')).length;
    expect(model.requests).toHaveLength(single.requests.length + f01Turns);
  });

  it('names the file and line of a malformed record', () => {
    const { dir } = copyRun();
    const path = join(dir, 'events.jsonl');
    const lines = readFileSync(path, 'utf8').split('\n');
    lines[4] = '{"type":"fork-start",';
    writeFileSync(path, lines.join('\n'));
    expect(() => load(dir)).toThrow(
      expect.objectContaining({
        code: 'REPORT_FILE_INVALID',
        message: expect.stringContaining(`${path}:5: not valid JSON`),
      }),
    );
  });

  it('names the field of a known record that lacks it', () => {
    const { dir } = copyRun();
    const path = join(dir, 'events.jsonl');
    let line = 0;
    editJsonl(path, (r, n) => {
      if (r.type === 'turn-end' && line === 0) {
        line = n;
        delete r.request.usage;
      }
      return r;
    });
    expect(() => load(dir)).toThrow(
      expect.objectContaining({
        code: 'REPORT_FILE_INVALID',
        message: expect.stringContaining(`${path}:${line}: request.usage:`),
      }),
    );
  });

  it('names a missing events.jsonl, a malformed manifest and a malformed transcript', () => {
    const missing = copyRun().dir;
    rmSync(join(missing, 'events.jsonl'));
    expect(() => load(missing)).toThrow(
      expect.objectContaining({
        code: 'REPORT_FILE_MISSING',
        message: `fan-out events ${join(missing, 'events.jsonl')}: cannot read (no such file)`,
      }),
    );
    const manifest = copyRun().dir;
    writeFileSync(join(manifest, 'manifest.json'), '{"fanoutId": "x", "prefix": {"bytes": -1}, "directives": []}');
    expect(() => load(manifest)).toThrow(
      expect.objectContaining({
        message: expect.stringMatching(/manifest\.json: prefix\.sha256: .*; prefix\.bytes: /),
      }),
    );
    const transcript = copyRun().dir;
    appendFileSync(join(transcript, 'forks', 'fo001-e3a67061-f04.jsonl'), 'not json\n');
    expect(() => load(transcript)).toThrow(
      expect.objectContaining({ message: expect.stringContaining('fo001-e3a67061-f04.jsonl:13: not valid JSON') }),
    );
  });

  it('still reports a run that did not settle, and notes what is missing', () => {
    const { dir } = copyRun();
    rmSync(join(dir, 'summary.json'));
    rmSync(join(dir, 'forks', 'fo001-e3a67061-f08.jsonl'));
    const model = load(dir);
    expect(model.files.notes).toContain(
      'summary.json is missing (the fan-out did not settle): totals and baselines are not shown',
    );
    expect(model.forks[7]!.report).toBeUndefined();
    expect(model.forks[7]!.status).toBe('completed'); // from fork-end in events.jsonl
  });
});
