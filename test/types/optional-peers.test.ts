import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// The published types compile in a program that does not have the optional peers: a consumer
// under TypeScript's default `skipLibCheck: false` imports every entry of the package, with only
// its runtime dependencies installed beside it (no ioredis, bullmq, ai, @ai-sdk/*, MCP SDK,
// echarts). They imported `ioredis` once: "Cannot find module 'ioredis'" in the user's build.

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PEERS = ['ioredis', 'bullmq', 'ai', '@ai-sdk/anthropic', '@modelcontextprotocol/sdk', 'echarts'];

describe('the published types without the optional peers', () => {
  it('compile in a consumer with skipLibCheck: false', async () => {
    const app = mkdtempSync(join(tmpdir(), 'fc-types-'));
    const pkg = join(app, 'node_modules', 'forkcache');
    mkdirSync(pkg, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    writeFileSync(join(pkg, 'package.json'), readFileSync(join(ROOT, 'package.json')));
    // the declarations exactly as the package build emits them (tsconfig.build.json)
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    await run(
      process.execPath,
      [
        tsc,
        '-p',
        join(ROOT, 'tsconfig.build.json'),
        '--declaration',
        '--emitDeclarationOnly',
        '--outDir',
        join(pkg, 'dist'),
      ],
      { cwd: ROOT },
    );
    // the runtime dependencies an install brings, and Node's types; nothing else
    for (const dep of [...Object.keys(manifest.dependencies), '@types/node']) {
      mkdirSync(join(app, 'node_modules', dep, '..'), { recursive: true });
      symlinkSync(join(ROOT, 'node_modules', dep), join(app, 'node_modules', dep));
    }
    for (const peer of PEERS) expect(existsSync(join(app, 'node_modules', peer))).toBe(false);
    writeFileSync(join(app, 'package.json'), '{ "name": "consumer", "private": true, "type": "module" }');
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
        },
        include: ['consumer.ts'],
      }),
    );
    writeFileSync(
      join(app, 'consumer.ts'),
      [
        "import * as forkcache from 'forkcache';",
        "import * as testing from 'forkcache/testing';",
        "import * as aiSdk from 'forkcache/ai-sdk';",
        'export const all = [forkcache, testing, aiSdk];',
        '',
      ].join('\n'),
    );
    const result = await run(process.execPath, [tsc, '-p', app], { cwd: app }).then(
      () => ({ code: 0, out: '' }),
      (err: { code: number; stdout: string }) => ({ code: err.code, out: err.stdout }),
    );
    expect(result.out).toBe('');
    expect(result.code).toBe(0);
  });
});
