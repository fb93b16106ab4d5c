/** One run of an arm: milliseconds of CPU and of wall time. */
export interface Sample {
  cpuMs: number;
  wallMs: number;
}

/** Both arms' means per run, and how many times the file-per-module arm costs the bundle. */
export interface Comparison {
  modules: Sample;
  bundle: Sample;
  cpuRatio: number;
  wallRatio: number;
}

/**
 * Start each arm `times` times, alternating them, after one uncounted start of each (the disk
 * cache warmed for both): the suite's benches of its build, as ratios measured in one run.
 */
export async function alternate(
  times: number,
  arms: { modules: string; bundle: string },
  start: (file: string) => Sample | Promise<Sample>,
): Promise<Comparison> {
  const sums = { bundle: { cpuMs: 0, wallMs: 0 }, modules: { cpuMs: 0, wallMs: 0 } };
  await start(arms.modules);
  await start(arms.bundle);
  for (let i = 0; i < times; i++) {
    for (const arm of ['modules', 'bundle'] as const) {
      const r = await start(arms[arm]);
      sums[arm].cpuMs += r.cpuMs;
      sums[arm].wallMs += r.wallMs;
    }
  }
  const per = (s: Sample): Sample => ({ cpuMs: Math.round(s.cpuMs / times), wallMs: Math.round(s.wallMs / times) });
  const ratio = (a: number, b: number): number => Math.round((a / b) * 100) / 100;
  return {
    modules: per(sums.modules),
    bundle: per(sums.bundle),
    cpuRatio: ratio(sums.modules.cpuMs, sums.bundle.cpuMs),
    wallRatio: ratio(sums.modules.wallMs, sums.bundle.wallMs),
  };
}
