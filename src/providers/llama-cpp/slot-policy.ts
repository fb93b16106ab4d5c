import type { EngineSlots, SlotChoice, SlotMeasures, SwitchFigures } from '../../core/ledger/engine-figures.ts';
import type { SlotFill } from '../../core/engine/bench-options.ts';
import type { PoolObserver, RequestSample, SlotPool } from './slot-pool.ts';

/** Switches measured before the policy judges them (the first one can be slow: a cold page cache). */
const SWITCHES_TO_JUDGE = 2;

/**
 * N requests at once must get through at least this many times as much as one before N slots
 * are worth it where the model is the bottleneck. On a CPU they split the cores (about 1×: each
 * request takes N times as long, and the forks' tools start later); a GPU decodes N sequences in
 * about the time of one (near N×). The margin keeps a noisy CPU measurement on one slot.
 */
export const GAIN_FOR_SLOTS = 1.25;

/** What the server and the fan-out are, before any fork's request. */
export interface PolicyServer {
  /** The server's slots (`/props` `total_slots`). */
  slots: number;
  /** The probe: the server clears an idle slot when a task starts on another (the default without `-np`). */
  clearsIdle: boolean;
  forks: number;
  /** The server allows slot files (`--slot-save-path`): switching needs them. */
  files: boolean;
  fill: SlotFill;
}

/** What the first turns measured (src/providers/llama-cpp/slot-pool.ts reports it; recorded in the summary). */
export interface TurnMeasures {
  /** Fork requests that ended, and their time in the model as if each had run alone, summed. */
  requests: number;
  modelMs: number;
  /** A fork's intervals without the model (between two requests, or its check after the last), and their sum. */
  gaps: number;
  toolMs: number;
  /** N requests at once against one (throughput), from the forks' first requests; undefined: not measured. */
  gain: number | undefined;
}

type PolicyMode = SlotChoice['mode'];

/** What the policy chose: how many requests at once, whether each fork's KV is switched, and why. */
interface PolicyChoice {
  mode: PolicyMode;
  atOnce: number;
  switching: boolean;
  why: string;
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** Forks whose requests would be in flight at once if none waited: 1 or less, one slot keeps up. */
function modelDemand(forks: number, m: TurnMeasures): number | undefined {
  if (m.requests === 0) return undefined;
  // per fork turn: a fork's time without the model spread over its requests
  const model = m.modelMs / m.requests;
  const tools = m.toolMs / m.requests;
  return model + tools === 0 ? undefined : (forks * model) / (model + tools);
}

function modeOf(atOnce: number, switching: boolean): PolicyMode {
  if (atOnce > 1) return switching ? 'slots-switched' : 'slots-with-copies';
  return switching ? 'one-slot-switched' : 'one-slot-recomputed';
}

function choice(atOnce: number, switching: boolean, why: string): PolicyChoice {
  return { mode: modeOf(atOnce, switching), atOnce, switching, why };
}

/**
 * The slot policy: one slot switched, N slots with copies, or N slots switched, from the server
 * (`/props`, the probe), the fork count and, once measured, the first turns (`measured`):
 *
 * - a server that clears idle slots keeps one slot (N slots there need a copy before every
 *   request and lose each fork's state between its turns), unless `slotFill: 'copy'` asked;
 * - on `-np N`, before any measurement, N slots, each fork's KV switched;
 * - measured: when the forks' tools and checks dominate (the forks' model demand at most one
 *   request at a time), one slot keeps up and switching on it wins; when the model dominates, N
 *   slots only where N requests at once get through `GAIN_FOR_SLOTS` times as much as one (a
 *   GPU's batched decoding), else they only split the cores and one slot goes first.
 *
 * Switching needs slot files; where a switch costs more than recomputing a fork's own turns,
 * `judgeSwitching` turns it off as the fan-out runs (N slots then keep their copies).
 */
export function choosePolicy(server: PolicyServer, measured?: TurnMeasures): PolicyChoice {
  const n = Math.max(1, Math.min(server.slots, server.forks));
  const switching = server.files;
  if (n === 1) return choice(1, switching, server.forks <= 1 ? 'one fork' : 'the server has one slot');
  if (server.clearsIdle && server.fill === 'copy' && server.files)
    return choice(n, true, 'asked for copies on a server that clears idle slots');
  const demand = measured ? modelDemand(server.forks, measured) : undefined;
  const split =
    demand === undefined || !measured
      ? ''
      : ` (${seconds(measured.toolMs / measured.requests)} without the model against ${seconds(measured.modelMs / measured.requests)} in it per fork request: ${demand.toFixed(1)} requests wanted at once)`;
  if (server.clearsIdle) {
    const base =
      'the server clears idle slots (one unified KV cache): N slots would need a copy before each request and lose each fork’s state between its turns';
    if (demand === undefined) return choice(1, switching, base);
    return choice(
      1,
      switching,
      demand <= 1
        ? `${base}; tools and checks dominate${split}, one slot keeps up`
        : `${base}; the model dominates${split}: on a GPU start it with -np N`,
    );
  }
  const np = `-np ${server.slots} keeps idle slots`;
  if (!measured || demand === undefined) return choice(n, switching, `${np}; nothing measured yet`);
  if (demand <= 1) return choice(1, switching, `${np}, but tools and checks dominate${split}: one slot keeps up`);
  const gain = measured.gain;
  if (gain !== undefined && gain >= GAIN_FOR_SLOTS)
    return choice(
      n,
      switching,
      `${np}, the model dominates${split} and ${n} requests at once got through ${gain.toFixed(2)}× as much as one`,
    );
  return choice(
    1,
    switching,
    `${np}, but the model dominates${split} and ${gain === undefined ? 'requests at once were not measured' : `${n} requests at once got through only ${gain.toFixed(2)}× as much as one`}: N slots only split the cores`,
  );
}

/**
 * N requests at once against one, from forks' first requests (all of one shape): each that ran
 * with others (concurrency c) against the first that ran alone, as c × alone / its own time per
 * token. About 1 on a CPU (each of N takes N times as long), near N on a GPU.
 */
export function parallelGain(samples: readonly RequestSample[]): number | undefined {
  const rate = (s: RequestSample): number => (s.serverMs ?? s.heldMs) / Math.max(1, s.tokens);
  const alone = samples.filter((s) => s.first && s.concurrency < 1.2);
  const together = samples.filter((s) => s.first && s.concurrency >= 1.5 && rate(s) > 0);
  if (alone.length === 0 || together.length === 0) return undefined;
  const solo = alone.reduce((sum, s) => sum + rate(s), 0) / alone.length;
  if (solo <= 0) return undefined;
  // never more than the c requests at once: past that, the baseline was slow (a cold cache)
  return (
    together.reduce((sum, s) => sum + Math.min(s.concurrency, (s.concurrency * solo) / rate(s)), 0) / together.length
  );
}

interface ForkLife {
  samples: RequestSample[];
  gaps: number;
  gapMs: number;
}

/**
 * The policy as a fan-out runs: it starts from the server alone (`choosePolicy` without
 * measurements), and on `-np N` lets the first fork request run alone (the baseline of the
 * gain), then N at once. Once a slot's worth of forks ended it decides, once, from their whole
 * lives (a fork's check after its last turn weighs as much as its tools between turns), and
 * from the gain of every fork's first request so far.
 */
export class LearningPolicy implements PoolObserver {
  readonly server: PolicyServer;
  readonly #forks = new Map<string, ForkLife>();
  readonly #ended: ForkLife[] = [];
  readonly #firsts: RequestSample[] = [];
  choice: PolicyChoice;
  /** What it had measured when it decided (undefined: the server alone decided). */
  decidedOn: TurnMeasures | undefined;
  readonly #learns: boolean;
  readonly #onDecide: (choice: PolicyChoice) => void;

  constructor(server: PolicyServer, onDecide: (choice: PolicyChoice) => void = () => {}) {
    this.server = server;
    this.choice = choosePolicy(server);
    this.#onDecide = onDecide;
    // what is measured changes something only where N slots keep their state
    this.#learns = this.choice.atOnce > 1 && !server.clearsIdle;
  }

  /** Attach to the pool: on `-np N` the first request runs alone (the gain's baseline). */
  attach(pool: SlotPool): void {
    pool.observer = this;
    pool.setLimit(this.#learns ? 1 : this.choice.atOnce);
  }

  /** What the ended forks' lives and the first requests measured so far. */
  get measures(): TurnMeasures {
    const gain = parallelGain(this.#firsts);
    const samples = this.#ended.flatMap((f) => f.samples);
    // each as if it had run alone: on a CPU N at once take N times as long (gain 1), on a GPU
    // about as long as one (gain N)
    const modelMs = samples.reduce(
      (sum, s) => sum + (s.heldMs * Math.min(gain ?? 1, s.concurrency)) / Math.max(1, s.concurrency),
      0,
    );
    const gaps = this.#ended.reduce((sum, f) => sum + f.gaps, 0);
    const toolMs = this.#ended.reduce((sum, f) => sum + f.gapMs, 0);
    return { requests: samples.length, modelMs, gaps, toolMs, gain };
  }

  #life(forkId: string): ForkLife {
    let life = this.#forks.get(forkId);
    if (!life) {
      life = { samples: [], gaps: 0, gapMs: 0 };
      this.#forks.set(forkId, life);
    }
    return life;
  }

  request(pool: SlotPool, forkId: string, sample: RequestSample | undefined): void {
    if (sample) {
      this.#life(forkId).samples.push(sample);
      if (sample.first) this.#firsts.push(sample);
    }
    // the first request ran alone (or failed): the others go as the server allows
    if (this.decidedOn === undefined && pool.limit < this.choice.atOnce) pool.setLimit(this.choice.atOnce);
  }

  gap(_pool: SlotPool, forkId: string, ms: number): void {
    const life = this.#life(forkId);
    life.gaps += 1;
    life.gapMs += ms;
  }

  ended(pool: SlotPool, forkId: string): void {
    const life = this.#forks.get(forkId);
    if (!life || life.samples.length === 0) return; // cancelled before its first request: nothing learned
    this.#ended.push(life);
    if (this.decidedOn !== undefined) return;
    if (this.#ended.length < Math.max(1, Math.min(this.server.slots, this.server.forks))) return;
    this.decidedOn = this.measures;
    this.choice = choosePolicy(this.server, this.decidedOn);
    if (this.#learns) pool.setLimit(this.choice.atOnce);
    this.#onDecide(this.choice);
  }
}

/**
 * What the policy learns from the first switches: a save and a restore against computing the
 * fork's own turns again (its own part × the server's measured prompt time per token). Where
 * switching costs more (a GPU computes prompts fast, and a big model's files are hundreds of
 * MB), it is turned off: a fork's later turn then reads the prefix from the slot and computes
 * its own part. Returns why, once, when it turned switching off.
 */
export function judgeSwitching(pool: SlotPool): string | undefined {
  const f = pool.figures;
  if (!pool.switching || f.restores < SWITCHES_TO_JUDGE || f.saves === 0 || pool.promptTokens === 0) return undefined;
  const switchMs = f.save_ms / f.saves + f.restore_ms / f.restores;
  const recomputeMs = pool.averageOwnTokens() * (pool.promptMs / pool.promptTokens);
  if (switchMs <= recomputeMs) return undefined;
  pool.switching = false;
  return `switching stopped after ${f.restores} restores: a save and a restore took ${switchMs.toFixed(0)} ms, computing a fork's own turns again ${recomputeMs.toFixed(0)} ms`;
}

const LABELS: Record<PolicyMode, (n: number) => string> = {
  'one-slot-switched': () => 'one slot switched',
  'one-slot-recomputed': () => 'one slot, later turns recomputed',
  'slots-with-copies': (n) => `${n} slots with copies`,
  'slots-switched': (n) => `${n} slots switched`,
};

/** What the policy ended with (switching may have stopped since it decided). */
export function slotChoice(report: EngineSlots, pool: SlotPool, policy: LearningPolicy | undefined): SlotChoice {
  const atOnce = policy?.choice.atOnce ?? pool.limit;
  const m = policy?.decidedOn;
  return {
    mode: modeOf(atOnce, pool.switching),
    at_once: atOnce,
    why: policy?.choice.why ?? (report.total <= 1 ? 'the server has one slot' : 'one slot'),
    measured: m ? slotMeasures(m) : null,
  };
}

/** The measures as the summary reports them (averages). */
function slotMeasures(m: TurnMeasures): SlotMeasures {
  return {
    requests: m.requests,
    model_ms: m.requests > 0 ? m.modelMs / m.requests : 0,
    gaps: m.gaps,
    tool_ms: m.gaps > 0 ? m.toolMs / m.gaps : 0,
    gain: m.gain ?? null,
  };
}

/** The measures back from the summary (sums): `choosePolicy` on them gives what the run chose. */
export function turnMeasures(m: SlotMeasures): TurnMeasures {
  return {
    requests: m.requests,
    modelMs: m.model_ms * m.requests,
    gaps: m.gaps,
    toolMs: m.tool_ms * m.gaps,
    gain: m.gain ?? undefined,
  };
}

/** The summary's one line: what the policy chose, why, and what it did. */
export function policyLine(
  report: EngineSlots,
  pool: SlotPool,
  chosen: SlotChoice,
  stopped: string | undefined,
): string {
  const f = pool.figures;
  const label = LABELS[chosen.mode](chosen.at_once);
  const fill =
    report.fill === 'warm-each'
      ? ', a prefill each'
      : report.fill === 'copy' && chosen.at_once === 1
        ? ', the prefix copied'
        : '';
  const learned = chosen.measured === null ? '' : ` (decided after ${chosen.measured.requests} requests)`;
  const switching =
    f.saves + f.restores + f.recomputed === 0
      ? ''
      : `; ${f.saves} saves, ${f.restores} restores (${f.save_ms.toFixed(0)} + ${f.restore_ms.toFixed(0)} ms), ${f.recomputed} later turns recomputed`;
  const tools =
    f.outside_ms + f.inside_ms > 0
      ? `; forks spent ${seconds(f.outside_ms)} without the model (tools, checks) and ${seconds(f.inside_ms)} in it`
      : '';
  return `${label}${fill}: ${chosen.why}${learned}${switching}${tools}${stopped ? `; ${stopped}` : ''}`;
}

/** The figures as the summary reports them. */
export function switchFigures(pool: SlotPool, filesLeft: number): SwitchFigures {
  return { on: pool.switching, ...pool.figures, peak_requests: pool.peakInFlight, files_left: filesLeft };
}
