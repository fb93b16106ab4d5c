import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createToolExecutor } from '../../../src/core/tools/executor.ts';
import { checkFileWords } from '../../../src/core/tools/checks/run.ts';
import { shellQuote, substituteCheck } from '../../../src/core/tools/checks/command.ts';
import { checkFileText, parseCheckFileArgs } from '../../../src/core/tools/checks/file-check.ts';

// Issue 42: the default rename check is file-local and language-aware: the file parses, and the
// old name is gone from its identifiers, never from its strings and comments.

const check = (file: string, text: string, ...args: string[]) =>
  checkFileText(parseCheckFileArgs(['--parses', ...args, file]), text);

/** Per language: a file keeping the word in a string and a comment, one keeping an identifier, one that does not parse. */
const cases = [
  {
    file: 'route.go',
    kept: 'package mux\n\n// routePattern was the old name\nfunc build() string {\n\treturn "routePattern: $routePattern"\n}\n',
    identifier: 'package mux\n\nfunc build() string {\n\treturn routePattern()\n}\n',
    broken: 'package mux\n\nfunc build() string {\n\treturn "x"\n',
  },
  {
    file: 'graph.py',
    kept: '# routePattern is gone\ndef build():\n    """routePattern docs"""\n    return "routePattern"\n',
    identifier: 'def build(g):\n    return g.routePattern\n',
    broken: 'def build(:\n    return 1\n',
  },
  {
    file: 'src/app.ts',
    kept: "// routePattern\nexport const label = 'routePattern';\nexport const t = `routePattern ${label}`;\n",
    identifier: 'export function routePattern(): number {\n  return 1;\n}\n',
    broken: 'export function build(: number {\n',
  },
  {
    file: 'src/lib.rs',
    kept: '/// routePattern\npub fn build() -> &\'static str {\n    "routePattern"\n}\n',
    identifier: 'pub fn build() -> u32 {\n    let routePattern = 1;\n    routePattern\n}\n',
    broken: 'pub fn build( -> u32 {\n',
  },
  {
    file: 'App.java',
    kept: 'class App {\n  // routePattern\n  String s = "routePattern";\n}\n',
    identifier: 'class App {\n  int routePattern = 1;\n}\n',
    broken: 'class App {\n  int x = ;\n',
  },
];

describe('forkcache check-file', () => {
  for (const c of cases)
    it(`${c.file}: keeps the word in strings and comments, refuses it as an identifier, refuses a file that does not parse`, async () => {
      expect(await check(c.file, c.kept, '--no-identifier', 'routePattern')).toEqual({
        ok: true,
        problems: [],
        notes: [],
      });
      const named = await check(c.file, c.identifier, '--no-identifier', 'routePattern');
      expect(named.ok).toBe(false);
      expect(named.problems[0]).toMatch(
        new RegExp(`^${c.file.replace('.', '\\.')}:\\d+:\\d+: routePattern is still an identifier`),
      );
      const broken = await check(c.file, c.broken);
      expect(broken.ok).toBe(false);
      expect(broken.problems[0]).toMatch(new RegExp(`^${c.file.replace('.', '\\.')}:\\d+:\\d+: does not parse as`));
    });

  it("a qualified use of another package's name is shown with its qualifier, and --allow accepts it", async () => {
    const go = 'package cobra\n\nimport "os/exec"\n\nfunc run() { _ = exec.Command("ls") }\n';
    const refused = await check('cmd.go', go, '--no-identifier', 'Command');
    expect(refused.problems).toEqual([
      expect.stringMatching(/^cmd\.go:5:23: Command is still an identifier, in exec\.Command \(/),
    ]);
    expect(await check('cmd.go', go, '--no-identifier', 'Command', '--allow', 'exec.Command')).toMatchObject({
      ok: true,
    });
  });

  it('a language without a grammar is checked by words, and says so', async () => {
    const verdict = await check('build.kt', 'val routePattern = 1\n', '--no-identifier', 'routePattern');
    expect(verdict.ok).toBe(false);
    expect(verdict.notes).toEqual([
      expect.stringMatching(/no grammar for \.kt; checked by words instead, and not parsed/),
    ]);
  });

  it('bad arguments are refused, naming the option', () => {
    expect(() => parseCheckFileArgs(['--no-identifier'])).toThrow(/--no-identifier: expected a name/);
    expect(() => parseCheckFileArgs(['--frobnicate', 'a.ts'])).toThrow(/unknown option --frobnicate/);
    expect(() => parseCheckFileArgs(['a.ts'])).toThrow(/nothing to check/);
    expect(() => parseCheckFileArgs(['--parses', 'a.ts', 'b.ts'])).toThrow(/expected one file, got 2/);
  });

  it("a plan's check that is exactly `forkcache check-file …` runs in the fork's thread, through the jail", async () => {
    const template = 'forkcache check-file --parses --no-identifier routePattern {file}';
    const odd = "it's a $(file).go";
    expect(checkFileWords(substituteCheck(template, { file: odd }, 'directives[0]'))).toEqual([
      '--parses',
      '--no-identifier',
      'routePattern',
      odd,
    ]);
    // any other shell is bash's
    expect(checkFileWords(`${substituteCheck(template, { file: 'a.go' }, 'd')} && go vet .`)).toBeUndefined();
    expect(checkFileWords(`forkcache check-file --parses "a.go"`)).toBeUndefined();
    expect(checkFileWords(`npx forkcache check-file --parses ${shellQuote('a.go')}`)).toBeUndefined();

    const dir = mkdtempSync(join(tmpdir(), 'fc-check-file-'));
    writeFileSync(join(dir, 'ok.go'), cases[0]!.kept);
    writeFileSync(join(dir, 'bad.go'), cases[0]!.identifier);
    const tools = createToolExecutor({ workspace: dir, sandbox: 'none' });
    const run = (file: string) => tools.check(substituteCheck(template, { file }, 'd'), { timeoutMs: 30_000 });
    expect(await run('ok.go')).toMatchObject({ exitCode: 0, output: '' });
    expect(await run('bad.go')).toMatchObject({
      exitCode: 1,
      output: expect.stringMatching(/^bad\.go:4:9: routePattern is still an identifier/),
    });
    // the file is read through the jail: a path out of the workspace is a failed check, not a read
    expect(await run('../../etc/passwd')).toMatchObject({
      exitCode: 1,
      output: expect.stringMatching(/^forkcache check-file: /),
    });
  });
});
