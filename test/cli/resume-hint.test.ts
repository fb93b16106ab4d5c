import { describe, expect, it } from 'vitest';
import { resumeCommand } from '../../src/cli/output/resume-hint.ts';

describe('resumeCommand', () => {
  it('names the run directory absolutely', () => {
    const cmd = resumeCommand('runs/fo001');
    expect(cmd).toBe(`forkcache resume ${process.cwd()}/runs/fo001`);
  });

  it('quotes a path a shell would split or expand', () => {
    expect(resumeCommand("/tmp/it's a run")).toBe(`forkcache resume '/tmp/it'\\''s a run'`);
    expect(resumeCommand('/tmp/$HOME')).toBe(`forkcache resume '/tmp/$HOME'`);
  });

  it('appends extra arguments', () => {
    expect(resumeCommand('/r', ['--retry', 'not_done'])).toBe('forkcache resume /r --retry not_done');
  });
});
