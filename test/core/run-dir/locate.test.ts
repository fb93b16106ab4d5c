import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { locateRuns } from '../../../src/integrations/report/locate.ts';
import { locateFanOuts } from '../../../src/core/run-dir/locate.ts';
import { copyRun, editJsonl, FIXTURE_RUN } from '../../integrations/report/helpers.ts';

describe('locateFanOuts: the one locator of runs', () => {
  it('orders by start time, not by name, for resume and the report alike', () => {
    // fo001 started an hour after fo002: a second engine's ids restart at fo001
    const { runs, dir: later } = copyRun('fo001-aaaa');
    editJsonl(join(later, 'events.jsonl'), (r) => ({ ...r, at: r.at + 3_600_000 }));
    const earlier = join(runs, 'fo002-bbbb');
    cpSync(FIXTURE_RUN, earlier, { recursive: true });
    expect(locateFanOuts(runs, 'INVALID_RUN_DIR')).toEqual([earlier, later]);
    expect(locateRuns(runs, { all: true }).dirs).toEqual([earlier, later]);
    expect(locateFanOuts(later, 'INVALID_RUN_DIR')).toEqual([later]);
  });

  it('orders a fan-out whose events cannot be read by its manifest instead of failing', () => {
    const { runs, dir } = copyRun('fo001-aaaa');
    writeFileSync(join(dir, 'events.jsonl'), 'not json\n{}\n');
    expect(locateFanOuts(runs, 'INVALID_RUN_DIR')).toEqual([dir]);
  });

  it('fails with the caller’s code when there is no fan-out', () => {
    const { runs } = copyRun('fo001-aaaa');
    expect(() => locateFanOuts(join(runs, 'nope'), 'INVALID_RUN_DIR')).toThrow(
      expect.objectContaining({ code: 'INVALID_RUN_DIR', message: `${join(runs, 'nope')}: no such directory` }),
    );
    expect(() => locateFanOuts(join(runs, 'fo001-aaaa', 'forks'), 'REPORT_FILE_MISSING')).toThrow(
      expect.objectContaining({
        code: 'REPORT_FILE_MISSING',
        message: expect.stringContaining('no manifest.json here nor in any sub-directory'),
      }),
    );
  });
});
