import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { probeBubblewrap } from '../../src/core/tools/sandbox/bwrap-probe.ts';
import { git, repoWith } from '../core/tools/git-fixture.ts';
import { writePlan } from './review-fixture.ts';
import { forkcache, lastJson } from './run-cli.ts';

// Issue 42: under the default sandbox (bubblewrap) the integration worktree held tracked files
// only and the sandbox showed only the system's directories, so `npx tsc` found no compiler and
// every fork was left out as if the base failed (exit 5). The check now sees the checkout's
// dependency folders (here node_modules, which git ignores) read-only, at their own path.
// A fork is untrusted and its merged code runs in the check: played here as the attacker.

const found = probeBubblewrap();
const reason = 'missing' in found ? found.missing : '';
const title = `the integration check in the bubblewrap sandbox${reason ? ` (skipped: ${reason})` : ''}`;

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSCONFIG = {
  compilerOptions: { target: 'es2022', module: 'esnext', moduleResolution: 'bundler', strict: true, noEmit: true },
  include: ['src'],
};
// what the attacker's merged check.sh tries before it type-checks; any success fails the check
const attack = (top: string): string =>
  [
    `TOP='${top}'`,
    'for t in node_modules/typescript/package.json "$TOP/node_modules/typescript/package.json"; do',
    '  if { echo pwned > "$t"; } 2>/dev/null; then echo "WROTE $t"; exit 1; fi',
    'done',
    'if cp /bin/sh node_modules/.bin/tsc 2>/dev/null; then echo REPLACED; exit 1; fi',
    'rm -rf "$TOP/node_modules/typescript/lib" 2>/dev/null',
    'if [ ! -d "$TOP/node_modules/typescript/lib" ]; then echo REMOVED; exit 1; fi',
    'if touch "$TOP/node_modules/planted.js" 2>/dev/null; then echo PLANTED; exit 1; fi',
    'if mv "$TOP/node_modules/typescript" "$TOP/node_modules/gone" 2>/dev/null; then echo MOVED; exit 1; fi',
    'if cat "$TOP/secret.txt" 2>/dev/null; then echo SECRET; exit 1; fi',
    'if ls "$TOP/src" 2>/dev/null; then echo CHECKOUT; exit 1; fi',
    'npx tsc --noEmit -p .',
    '',
  ].join('\n');

/** A TypeScript project: src/a.ts exports alpha, src/b.ts calls it; typescript is its (git-ignored) dev dependency. */
function tsProject(extra: Record<string, string> = {}): string {
  const repo = repoWith({
    '.gitignore': 'node_modules/\n',
    'tsconfig.json': `${JSON.stringify(TSCONFIG)}\n`,
    'check.sh': 'npx tsc --noEmit -p .\n',
    'src/a.ts': 'export function alpha(): number {\n  return 1;\n}\n',
    'src/b.ts': "import { alpha } from './a';\n\nexport const b: number = alpha();\n",
    ...extra,
  });
  cpSync(join(ROOT, 'node_modules/typescript'), join(repo, 'node_modules/typescript'), {
    recursive: true,
    dereference: true,
  });
  mkdirSync(join(repo, 'node_modules/.bin'));
  symlinkSync('../typescript/bin/tsc', join(repo, 'node_modules/.bin/tsc'));
  writeFileSync(join(repo, 'secret.txt'), 'the user checkout only\n');
  return repo;
}

/** Every path under `dir` with its type, mode and content hash (links by their target). */
function fingerprint(dir: string): string {
  const hash = createHash('sha256');
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }).sort((a, b) =>
    join(a.parentPath, a.name).localeCompare(join(b.parentPath, b.name)),
  )) {
    const path = join(entry.parentPath, entry.name);
    hash.update(`${path}\0${entry.isSymbolicLink() ? 'l' : entry.isDirectory() ? 'd' : 'f'}\0`);
    if (entry.isFile()) hash.update(`${statSync(path).mode}\0`).update(readFileSync(path));
  }
  return hash.digest('hex');
}

const plan = (repo: string, directives: string[]): string =>
  writePlan(repo, directives, {
    isolation: 'worktree',
    allow: ['read_file', 'edit_file', 'write_file', 'bash'],
    sandbox: 'bwrap',
    integrationCheck: 'sh check.sh',
    integrationRounds: 0,
  });

const rename = (file: string): string => `rename alpha to beta in ${file}`;

describe.skipIf(reason !== '')(title, () => {
  it('`npx tsc --noEmit -p .` finds the project’s own compiler and passes on the merged rename', async () => {
    const repo = tsProject();
    const ran = await forkcache(['run', plan(repo, [rename('src/a.ts'), rename('src/b.ts')]), '--json']);
    expect(ran.code).toBe(0);
    const integration = lastJson(ran.stdout)['integration'];
    expect(integration).toMatchObject({ integrated: 2, left_out: 0, passed: true, check_runs: 1, blocked: false });
    expect(git(repo, 'show', `${integration['repos'][0]['branch']}:src/b.ts`)).toContain('beta()');
  });

  it('a merged fork whose check writes into node_modules, replaces a package file or reads the checkout fails at each, and node_modules stays byte-identical', async () => {
    const repo = tsProject();
    writeFileSync(join(repo, 'attack.sh'), attack(repo));
    git(repo, 'add', 'attack.sh');
    git(repo, 'commit', '-qm', 'the attack, as data');
    const before = fingerprint(join(repo, 'node_modules'));
    const ran = await forkcache([
      'run',
      plan(repo, [rename('src/a.ts'), rename('src/b.ts'), 'run `cp attack.sh check.sh` and report']),
      '--json',
    ]);
    const integration = lastJson(ran.stdout)['integration'];
    // every attempt failed, so the attacker's check went on to type-check, and passed
    const out = integration['repos'][0]['forks'].filter((f: { status: string }) => f.status !== 'integrated');
    expect(out).toEqual([]);
    expect(integration).toMatchObject({ integrated: 3, passed: true });
    expect(fingerprint(join(repo, 'node_modules'))).toBe(before);
    expect(ran.code).toBe(0);
  });

  it('a fork that commits its own node_modules gets its own, not the user’s linked over it', async () => {
    const repo = tsProject();
    // the check passes on the user's folder (a directory with typescript) or on the fork's own file
    writeFileSync(
      join(repo, 'check.sh'),
      'if [ -d node_modules/typescript ]; then exit 0; fi\ntest "$(cat node_modules)" = "the fork\'s own"\n',
    );
    git(repo, 'commit', '-qam', 'a check of what node_modules is');
    const before = fingerprint(join(repo, 'node_modules'));
    // `node_modules/` ignores directories only: a file of that name is committed
    const ran = await forkcache([
      'run',
      plan(repo, ['run `printf "the fork\'s own" > node_modules` and report']),
      '--json',
    ]);
    const integration = lastJson(ran.stdout)['integration'];
    expect(integration).toMatchObject({ integrated: 1, passed: true });
    expect(git(repo, 'show', `${integration['repos'][0]['branch']}:node_modules`)).toBe("the fork's own");
    expect(fingerprint(join(repo, 'node_modules'))).toBe(before);
  });

  it('checkDependencies: [] shows the check nothing of the checkout: the compiler is not found, and the integration says it cannot run (exit 6)', async () => {
    const repo = tsProject();
    const path = writePlan(repo, [rename('src/a.ts')], {
      isolation: 'worktree',
      sandbox: 'bwrap',
      integrationCheck: 'node_modules/.bin/tsc --noEmit -p .',
      checkDependencies: [],
    });
    const ran = await forkcache(['run', path, '--json']);
    expect(ran.code).toBe(6);
    const json = lastJson(ran.stdout);
    expect(json['integration']['repos'][0]['blocked']).toMatch(/^the check cannot run \(exit 127\)/);
    expect(json['fork_results'].map((f: { status: string }) => f.status)).toEqual(['completed']);
  });
});

describe('checkDependencies (issue 42)', () => {
  it('refuses a name that is not one folder at the repository’s top, naming the field (exit 2)', async () => {
    const repo = repoWith({ 'a.txt': 'alpha\n' });
    for (const bad of ['../outside', 'node_modules/typescript', '.git']) {
      const path = writePlan(repo, [rename('a.txt')], {
        isolation: 'worktree',
        integrationCheck: 'true',
        checkDependencies: [bad],
      });
      const ran = await forkcache(['run', path]);
      expect(ran.code).toBe(2);
      expect(ran.stderr).toContain('checkDependencies');
    }
  });
});
