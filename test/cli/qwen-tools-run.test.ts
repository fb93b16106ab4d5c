import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { workspace } from '../core/engine/helpers.ts';
import { forkcache, lastJson } from './run-cli.ts';

/*
 * Issue 32, the Qwen Code half: forks of a recorded Qwen Code 0.24.4 request (its own tool
 * array: read_file, glob, grep_search, tool_search, tool_call, agent...) on the emulator's
 * DashScope mode, in the qwen layout, rename with Qwen Code's tools. Its array declares no
 * edit tool: the fork loads `edit` with tool_search and runs it through tool_call, as Qwen
 * Code's own deferred tools work, without a byte of the cached prefix changing.
 */
const PARENT = join(import.meta.dirname, '../fixtures/qwen-code/0.24.4/read/wire/02.json');
const FILES = 20;

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function transcriptLines(runDir: string): string[] {
  const out: string[] = [];
  for (const fanout of readdirSync(runDir))
    for (const file of readdirSync(join(runDir, fanout, 'forks')).filter((f) => f.endsWith('.jsonl')))
      out.push(
        ...readFileSync(join(runDir, fanout, 'forks', file), 'utf8')
          .trim()
          .split('\n'),
      );
  return out;
}

describe('a fork of a recorded Qwen Code session on the DashScope mode', () => {
  it(`renames in ${FILES} files with read_file, tool_search + tool_call (edit) and grep_search`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fc-qwen-tools-'));
    dirs.push(dir);
    const files = Object.fromEntries(
      Array.from({ length: FILES }, (_, i) => [
        `src/f${String(i + 1).padStart(2, '0')}.ts`,
        `export function fetchData() {\n  return ${i};\n}\nexport const again = fetchData();\n`,
      ]),
    );
    const ws = workspace(files);
    const parent = (JSON.parse(readFileSync(PARENT, 'utf8')) as { body: Record<string, unknown> }).body;
    writeFileSync(
      join(dir, 'plan.json'),
      JSON.stringify({
        parent,
        provider: 'dashscope',
        layout: 'qwen',
        directives: Object.keys(files).map((f) => `rename fetchData to loadData in ${f}`),
        workspace: ws,
        runDir: join(dir, 'runs'),
        allow: ['read_file', 'edit_file', 'grep'],
        emulator: { script: 'refactor', latency: 'off' },
      }),
    );
    const { code, stdout, stderr } = await forkcache(['run', join(dir, 'plan.json'), '--json'], {
      ANTHROPIC_API_KEY: undefined,
      DASHSCOPE_API_KEY: undefined,
      OPENAI_API_KEY: undefined,
      OPENAI_BASE_URL: undefined,
    });
    expect(code, stderr).toBe(0);
    expect(stderr).toMatch(/dashscope mode/);
    const summary = lastJson(stdout);
    expect(summary['forks'].completed, JSON.stringify(summary)).toBe(FILES);
    for (const file of Object.keys(files)) {
      const text = readFileSync(join(ws, file), 'utf8');
      expect(text, file).not.toMatch(/\bfetchData\b/);
      expect(text.match(/\bloadData\b/g), file).toHaveLength(2);
    }
    const lines = transcriptLines(join(dir, 'runs'));
    const starts = lines.filter((l) => l.includes('"type":"tool-start"'));
    for (const name of ['read_file', 'tool_search', 'tool_call', 'grep_search'])
      expect(
        starts.filter((l) => l.includes(`"name":"${name}"`)),
        name,
      ).toHaveLength(FILES);
    expect(lines.join('\n')).not.toContain('unknown tool');
    expect(lines.filter((l) => l.includes('"isError":true'))).toEqual([]);
    // every fork's first request read the whole shared prefix the warm-up cached
    const fanout = readdirSync(join(dir, 'runs'))[0]!;
    const written = JSON.parse(readFileSync(join(dir, 'runs', fanout, 'summary.json'), 'utf8')) as {
      cache: { cache_efficiency: number };
      prefix: { shared_tokens: number };
    };
    expect(written.prefix.shared_tokens).toBeGreaterThan(10_000);
    expect(written.cache.cache_efficiency).toBeGreaterThanOrEqual(0.99);
  });
});
