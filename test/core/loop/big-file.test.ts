import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { runForkLoop } from '../../../src/core/loop/run-fork.ts';
import { freeze } from '../../../src/core/prefix/freeze.ts';
import { streamMessageBytes } from '../../../src/providers/anthropic/send.ts';
import { createToolExecutor } from '../../../src/core/tools/executor.ts';
import { DEFAULT_TOOL_LIMITS } from '../../../src/core/tools/limits.ts';
import { bigSnapshot, sharedEmulator, workspace } from '../engine/helpers.ts';

// Issue 23: one file of the SDK (326,861 bytes) was over read_file's 262,144-byte limit; its
// fork could not read it, reported "not done", and the repository no longer compiled. Reads
// are now cut at a whole line with a note, and the refactor model pages through the file.

const emulator = sharedEmulator({ script: 'refactor' });

/** A generated source file of about `bytes` bytes that uses `buildHeaders` on many lines (3 distinct ones). */
function bigSource(bytes: number, extraLine = ''): string {
  const lines: string[] = [];
  for (let i = 0, size = 0; size < bytes; i++) {
    const line =
      i % 7 === 0
        ? `  headers.push(buildHeaders({ 'x-kind': 'kind_${i % 3}' }));${extraLine}`
        : `  const value${i} = compute(${i}, 'padding to make the file large enough for the test');`;
    lines.push(line);
    size += line.length + 1;
  }
  return `export function make() {\n${lines.join('\n')}\n}\n`;
}

async function rename(files: Record<string, string>, path: string) {
  const ws = workspace(files);
  const prefix = freeze(bigSnapshot(`big-${path}-${Date.now()}`));
  const client = new Anthropic({ apiKey: 'test', baseURL: emulator.current.url, maxRetries: 0 });
  const outcome = await runForkLoop({
    prefix,
    child: prefix.child(`rename buildHeaders to mergeHeaders in ${path}`),
    transport: { send: (body, options) => streamMessageBytes(client, body, options) },
    tools: createToolExecutor({ workspace: ws }),
  });
  return { outcome, text: readFileSync(join(ws, path), 'utf8') };
}

describe('a file over the read limit', () => {
  it('is read in parts and renamed (replace_all), like the others', async () => {
    const source = bigSource(330_000);
    expect(source.length).toBeGreaterThan(DEFAULT_TOOL_LIMITS.maxReadBytes);
    const { outcome, text } = await rename({ 'src/big.ts': source }, 'src/big.ts');
    expect(outcome.status).toBe('completed');
    expect(text).toBe(source.replaceAll('buildHeaders', 'mergeHeaders'));
    expect(outcome.report?.result).toMatch(/renamed \d+ occurrence\(s\) .* read in 2 parts/);
    expect(outcome.filesChanged).toEqual(['src/big.ts']);
  });

  it('is renamed line by line when the name also occurs inside longer names (too big to write whole)', async () => {
    const source = bigSource(300_000, ' // buildHeadersLegacy stays');
    const { outcome, text } = await rename({ 'src/big.ts': source }, 'src/big.ts');
    expect(outcome.status).toBe('completed');
    expect(text).toBe(source.replace(/\bbuildHeaders\b/g, 'mergeHeaders'));
    expect(text).toContain('buildHeadersLegacy stays');
  });
});
