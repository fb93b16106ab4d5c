import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoWith } from '../core/tools/git-fixture.ts';
import { writePlan } from './review-fixture.ts';
import { cliArgs, runNode } from './run-cli.ts';

// Issue 42: `run --report` without echarts said so only after the whole run, and `resume
// --report` was refused. The report writer is loaded before the first request, on both.

// a loader hook that makes echarts impossible to find, as an install without the optional peer
const HOOK = `export async function resolve(s, c, next) { if (s === 'echarts' || s.startsWith('echarts/')) { const e = new Error("Cannot find package 'echarts' imported from " + c.parentURL); e.code = 'ERR_MODULE_NOT_FOUND'; throw e; } return next(s, c); }`;
const NO_ECHARTS = `data:text/javascript,${encodeURIComponent(
  `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOK)}`)});`,
)}`;

describe('--report is checked before the first request (issue 42)', () => {
  it('run and resume with --report and no echarts stop at once, naming the package; nothing is sent', async () => {
    const repo = repoWith({ 'a.txt': 'alpha\n' });
    const plan = writePlan(repo, ['rename alpha to beta in a.txt']);
    const run = await runNode(['--import', NO_ECHARTS, ...cliArgs('run', plan, '--report')], { cwd: repo });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(/the HTML report needs echarts .*npm install echarts@/);
    expect(run.stderr).not.toMatch(/forks of .* against/); // no endpoint was opened
    expect(existsSync(join(dirname(plan), 'runs'))).toBe(false);
    const resume = await runNode(
      ['--import', NO_ECHARTS, ...cliArgs('resume', join(dirname(plan), 'runs'), '--report')],
      {
        cwd: repo,
      },
    );
    expect(resume.code, resume.stderr).toBe(1); // accepted (a usage error is 2), and refused for echarts
    expect(resume.stderr).toMatch(/the HTML report needs echarts/);
  });
});
