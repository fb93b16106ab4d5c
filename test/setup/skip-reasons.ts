import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/*
 * One line per skipped test, with the reason the test gave (`ctx.skip(reason)`): run as an
 * ordinary user, without bubblewrap, Chromium or redis-server, the tests that need them skip,
 * and each says why (issue 47). The default reporter counts skips but does not name them.
 */
export default class SkipReasons implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const lines: string[] = [];
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state !== 'skipped') continue;
        const file = relative(process.cwd(), module.moduleId);
        lines.push(`  ${file} › ${test.fullName}: ${result.note ?? 'no reason given'}`);
      }
    }
    if (lines.length > 0) process.stdout.write(`\nskipped, and why (${lines.length}):\n${lines.join('\n')}\n`);
  }
}
