import { ForkcacheError } from '../../core/util/errors.ts';

/**
 * `forkcache economics --sweep forks=1..64 --sweep prefix=10K,100K`: the axes of a grid of
 * fan-out shapes. A value list is `a,b,c`; a range `a..b` doubles from a up to b (1..64 is
 * 1, 2, 4, … 64; b itself always included); numbers take K (thousand) and M (million).
 */
const SWEEP_AXES = ['forks', 'prefix', 'directive', 'file-tokens', 'fresh-tokens', 'model'] as const;
export type SweepAxis = (typeof SWEEP_AXES)[number];
export type Sweep = Partial<Record<Exclude<SweepAxis, 'model'>, number[]>> & { model?: string[] };

const MAX_POINTS = 2_000;
const MAX_VALUE = 10_000_000;

function bad(spec: string, message: string): ForkcacheError {
  return new ForkcacheError('INVALID_FLAG', `--sweep ${spec}: ${message}`, { data: { field: '--sweep' } });
}

function number(text: string, spec: string): number {
  const m = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(text.trim());
  if (!m) throw bad(spec, `"${text}" is not a number (e.g. 64, 10K, 1.5M)`);
  const value = Math.round(Number(m[1]) * (/[kK]/.test(m[2]!) ? 1e3 : /[mM]/.test(m[2]!) ? 1e6 : 1));
  if (value > MAX_VALUE) throw bad(spec, `${text} is over ${MAX_VALUE.toLocaleString('en-US')}`);
  return value;
}

function values(text: string, spec: string, axis: SweepAxis): number[] {
  const out: number[] = [];
  for (const part of text.split(',')) {
    const range = /^(.+)\.\.(.+)$/.exec(part);
    if (!range) {
      out.push(number(part, spec));
      continue;
    }
    const [from, to] = [number(range[1]!, spec), number(range[2]!, spec)];
    if (from < 1 || to < from) throw bad(spec, `a range a..b needs 1 <= a <= b (got ${part})`);
    for (let v = from; v < to; v *= 2) out.push(v);
    out.push(to);
  }
  if (axis === 'forks' && out.some((v) => v < 1)) throw bad(spec, 'forks must be at least 1');
  return [...new Set(out)].sort((a, b) => a - b);
}

/** Parse every `--sweep NAME=VALUES`; an axis given twice, an unknown axis or a bad value names the spec. */
export function parseSweep(specs: readonly string[]): Sweep {
  const sweep: Sweep = {};
  for (const spec of specs.flatMap((s) => s.split(/\s+/)).filter(Boolean)) {
    const eq = spec.indexOf('=');
    const axis = spec.slice(0, eq) as SweepAxis;
    if (eq < 1 || !SWEEP_AXES.includes(axis))
      throw bad(spec, `expected NAME=VALUES with NAME one of ${SWEEP_AXES.join(', ')}`);
    if (sweep[axis] !== undefined) throw bad(spec, `${axis} is swept twice`);
    const text = spec.slice(eq + 1);
    if (text === '') throw bad(spec, 'no values');
    if (axis === 'model') sweep.model = text.split(',').filter(Boolean);
    else sweep[axis] = values(text, spec, axis);
  }
  const points = Object.values(sweep).reduce((n, list) => n * list.length, 1);
  if (points > MAX_POINTS) throw new ForkcacheError('INVALID_FLAG', `--sweep: ${points} points, at most ${MAX_POINTS}`);
  return sweep;
}

/** Every combination of the swept values over the base shape, in axis order (forks last: a row per N). */
export function sweepPoints<T extends Record<string, unknown>>(
  base: T,
  sweep: Sweep,
  keys: Record<SweepAxis, keyof T>,
): T[] {
  let points: T[] = [base];
  for (const axis of ['model', 'prefix', 'directive', 'file-tokens', 'fresh-tokens', 'forks'] as const) {
    const list = sweep[axis] as readonly unknown[] | undefined;
    if (!list) continue;
    points = points.flatMap((p) => list.map((v) => ({ ...p, [keys[axis]]: v })));
  }
  return points;
}
