import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ReplayModel } from '../../../src/integrations/emulator/scripts/replay.ts';
import { readFanOutDir } from '../../../src/core/run-dir/manifest.ts';
import { loadPlan } from '../../../src/cli/plan/plan.ts';
import { readJsonFile } from '../../../src/core/util/json-file.ts';
import { readReportJson } from '../../../src/integrations/report/read-files.ts';

const dir = mkdtempSync(join(tmpdir(), 'forkcache-json-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const broken = join(dir, 'broken.json');
writeFileSync(broken, '{ "a": ');
const absent = join(dir, 'absent.json');

const esc = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function failure(read: () => unknown): { code: string; message: string; data: unknown } {
  try {
    read();
  } catch (err) {
    return err as { code: string; message: string; data: unknown };
  }
  throw new Error('expected the read to fail');
}

describe('readJsonFile: one reader, one error style', () => {
  it('names what the file is and its path, and says why', () => {
    writeFileSync(join(dir, 'ok.json'), '{"a":1}');
    expect(readJsonFile(join(dir, 'ok.json'), 'thing')).toEqual({ a: 1 });
    expect(failure(() => readJsonFile(absent, 'thing'))).toMatchObject({
      code: 'INVALID_RUN_DIR',
      message: `thing ${absent}: cannot read (no such file)`,
      data: { path: absent },
    });
    expect(failure(() => readJsonFile(dir, 'thing')).message).toBe(`thing ${dir}: cannot read (is a directory)`);
    expect(failure(() => readJsonFile(broken, 'thing', 'MODEL_CATALOGUE_INVALID'))).toMatchObject({
      code: 'MODEL_CATALOGUE_INVALID',
      message: expect.stringMatching(new RegExp(`^thing ${esc(broken)}: not valid JSON \\(.+\\)$`)),
    });
  });

  it('is what the plan, the run directory, the report and the replay fixture read with', () => {
    // each keeps its error code; the message style is the same everywhere
    expect(failure(() => loadPlan(broken))).toMatchObject({
      code: 'INVALID_PLAN',
      message: expect.stringMatching(new RegExp(`^plan ${esc(broken)}: not valid JSON`)),
    });
    expect(failure(() => readFanOutDir(dir))).toMatchObject({
      code: 'INVALID_RUN_DIR',
      message: `fan-out manifest ${join(dir, 'manifest.json')}: cannot read (no such file)`,
    });
    expect(failure(() => readReportJson(absent, 'fan-out summary'))).toMatchObject({
      code: 'REPORT_FILE_MISSING',
      message: `fan-out summary ${absent}: cannot read (no such file)`,
    });
    expect(failure(() => readReportJson(broken, 'fan-out summary')).code).toBe('REPORT_FILE_INVALID');
    expect(failure(() => ReplayModel.fromFile(broken))).toMatchObject({
      code: 'INVALID_OPTION',
      message: expect.stringMatching(new RegExp(`^replay fixture ${esc(broken)}: not valid JSON`)),
    });
  });
});
