/** One run of an arm: milliseconds of CPU and of wall time. */
export interface Sample {
  cpuMs: number;
  wallMs: number;
}

/** Each arm's mean per run, and how many times the first arm of the order costs the second. */
export type Comparison<A extends string> = Record<A, Sample> & { cpuRatio: number; wallRatio: number };

/**
 * Run each of two arms `times` times, alternating them in `order`, after one uncounted run of
 * each (the disk cache and the JIT warmed for both): the benches that compare two ways of doing
 * one thing, as ratios measured in one run.
 */
export async function alternate<A extends string, T>(
  times: number,
  arms: Readonly<Record<A, T>>,
  order: readonly [A, A],
  start: (arm: T) => Sample | Promise<Sample>,
): Promise<Comparison<A>> {
  const sums = new Map<A, Sample>(order.map((arm) => [arm, { cpuMs: 0, wallMs: 0 }]));
  for (const arm of order) await start(arms[arm]);
  for (let i = 0; i < times; i++) {
    for (const arm of order) {
      const r = await start(arms[arm]);
      const sum = sums.get(arm)!;
      sum.cpuMs += r.cpuMs;
      sum.wallMs += r.wallMs;
    }
  }
  const per = (s: Sample): Sample => ({ cpuMs: Math.round(s.cpuMs / times), wallMs: Math.round(s.wallMs / times) });
  const ratio = (a: number, b: number): number => Math.round((a / b) * 100) / 100;
  const [first, second] = order.map((arm) => sums.get(arm)!) as [Sample, Sample];
  return {
    ...(Object.fromEntries(order.map((arm) => [arm, per(sums.get(arm)!)])) as Record<A, Sample>),
    cpuRatio: ratio(first.cpuMs, second.cpuMs),
    wallRatio: ratio(first.wallMs, second.wallMs),
  };
}
