import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { checkPlaceholders, shellQuote, substituteCheck } from '../../../src/core/tools/checks/command.ts';

describe("a check command's placeholders", () => {
  it("are the fork's fields, shell-quoted: a hostile file name stays one argument", () => {
    const file = "src/$(touch pwned) it's `x`.ts";
    const command = substituteCheck('printf %s {file}', { file }, 'directives[0]');
    expect(command).toBe(`printf %s ${shellQuote(file)}`);
    // the shell itself gives the name back unchanged, nothing run
    expect(execFileSync('bash', ['-c', command], { encoding: 'utf8' })).toBe(file);
  });

  it("leave the shell's own ${NAME} alone, and name a missing field and the fork", () => {
    expect(checkPlaceholders('test -e {file} && echo ${HOME} {directive} {file}')).toEqual(['file', 'directive']);
    expect(substituteCheck('echo ${HOME} {file}', { file: 'a.ts' }, 'directives[0]')).toBe("echo ${HOME} 'a.ts'");
    expect(() => substituteCheck('test -e {path}', { file: 'a.ts', directive: 'x' }, 'directives[3]')).toThrow(
      'check: {path} is not a field of directives[3] (its fields: {directive}, {file})',
    );
  });
});
