import { ForkcacheError } from '../util/errors.ts';
import { FORK_END_STATUSES, type AgentStatus } from '../util/fork-status.ts';
import { addCost, breakdownToUsd, costNano, zeroCost, type CostBreakdown } from './cost.ts';
import { BUILTIN_CATALOGUE, findModel, type ModelCatalogue } from '../models/catalogue.ts';
import { parseRecord, type LedgerRecord, type LedgerRecordInput } from './records.ts';
import { summarize, type LedgerSummary } from './summary.ts';
import { AgentTree, type AgentKind, type AgentNode } from './tree.ts';
import { sumUsage, type Usage } from './usage.ts';

/** Options of `UsageLedger`. */
export interface LedgerOptions {
  /** Prices and cache rules; defaults to the built-in table. */
  table?: ModelCatalogue;
  /** Fresh-agent input tokens for fork children whose records do not carry `freshInputTokens`. */
  defaultFreshInputTokens?: number;
}

/** Usage and cost of a set of requests (USD). */
export interface UsageTotals {
  requests: number;
  usage: Usage;
  /** Null when some request's model cannot be priced. */
  cost: CostBreakdown | null;
}

/** One agent's own requests and its whole subtree (itself plus every descendant, any depth). */
export interface AgentTotals {
  /** The agent's id: a fork's `forkId`, the parent's, a fresh agent's. */
  agentId: string;
  kind: AgentKind | null;
  parentId: string | null;
  status: AgentStatus;
  children: string[];
  own: UsageTotals;
  subtree: UsageTotals;
}

const STATUSES: readonly AgentStatus[] = ['running', ...FORK_END_STATUSES];

/**
 * The usage and cost ledger of one run: every request of every agent, rolled up per agent and
 * for the whole tree, with the fan-out cache metrics and the no-cache / fresh-agent baselines
 * of docs/architecture.md. Records are validated on entry; a bad one changes nothing.
 *
 * @example
 * const ledger = new UsageLedger({ defaultFreshInputTokens: 16_200 });
 * ledger.record({ forkId: 'root', kind: 'parent', turn: 0, model: 'claude-opus-5-5', usage: message.usage, at: now() });
 * ledger.record({ forkId: 'f1', parentId: 'root', kind: 'fork', turn: 0, model: 'claude-opus-5-5', usage, sharedPrefixTokens: 48_500, at: now() });
 * ledger.setStatus('f1', 'completed');
 * console.log(JSON.stringify(ledger.summary()));
 */
export class UsageLedger {
  readonly #table: ModelCatalogue;
  readonly #defaultFresh: number | undefined;
  readonly #tree = new AgentTree();
  readonly #records: LedgerRecord[] = [];

  constructor(options: LedgerOptions = {}) {
    this.#table = options.table ?? BUILTIN_CATALOGUE;
    const fresh = options.defaultFreshInputTokens;
    if (fresh !== undefined && !(Number.isInteger(fresh) && fresh >= 0)) {
      throw new ForkcacheError(
        'INVALID_OPTION',
        `defaultFreshInputTokens: expected a non-negative integer, got ${fresh}`,
        {
          data: { field: 'defaultFreshInputTokens' },
        },
      );
    }
    this.#defaultFresh = fresh;
  }

  /** The model table prices come from. */
  get table(): ModelCatalogue {
    return this.#table;
  }

  /**
   * Add one request. A model the catalogue does not know is recorded with a null cost. Throws
   * `LEDGER_INVALID_RECORD` naming the field for negative or fractional tokens, a parent that contradicts an earlier record, a cycle,
   * or a kind that contradicts the agent's earlier records.
   */
  record(input: LedgerRecordInput): LedgerRecord {
    const { record } = parseRecord(input, this.#records.length, this.#table);
    this.#tree.add(record);
    this.#records.push(record);
    return structuredClone(record);
  }

  /**
   * Update an agent's status (`running` → one of `FORK_END_STATUSES`; terminal
   * states are final, repeating one is a no-op). An unknown agent is created, as `kind`
   * (default `fork`), so a child that fails before its first request still counts.
   */
  setStatus(forkId: string, status: AgentStatus, options: { parentId?: string; kind?: 'fork' | 'fresh' } = {}): void {
    if (!STATUSES.includes(status)) {
      throw new ForkcacheError(
        'LEDGER_INVALID_STATUS',
        `status: expected one of ${STATUSES.join(', ')}, got "${String(status)}"`,
        {
          data: { field: 'status' },
        },
      );
    }
    if (typeof forkId !== 'string' || forkId === '') {
      throw new ForkcacheError('LEDGER_INVALID_STATUS', 'forkId: expected a non-empty string', {
        data: { field: 'forkId' },
      });
    }
    this.#tree.setStatus(forkId, status, options.parentId, options.kind ?? 'fork');
  }

  /** Every record so far, in arrival order (copies). */
  records(): LedgerRecord[] {
    return structuredClone(this.#records);
  }

  /** Ids of every agent known to the ledger. */
  forkIds(): string[] {
    return this.#tree.nodes().map((n) => n.id);
  }

  /** One agent's own totals and its subtree's. Unknown id: `LEDGER_UNKNOWN_FORK`. */
  totals(agentId: string): AgentTotals {
    const node = this.#tree.require(agentId);
    return {
      agentId,
      kind: node.kind ?? null,
      parentId: node.parentId ?? null,
      status: node.status,
      children: [...node.children],
      own: this.#totalsOf([node]),
      subtree: this.#totalsOf(this.#tree.subtree(agentId)),
    };
  }

  /**
   * A JSON-able summary of the whole ledger, or of one agent's subtree when `rootId` is given.
   * See `LedgerSummary` and src/core/ledger/fan-out-cache.ts / baselines.ts for the exact definitions.
   */
  summary(rootId?: string): LedgerSummary {
    const scope = rootId === undefined ? this.#tree.nodes() : this.#tree.subtree(rootId);
    return summarize(scope, rootId ?? null, (id) => this.#tree.get(id), this.#table, this.#defaultFresh);
  }

  #totalsOf(nodes: readonly AgentNode[]): UsageTotals {
    const records = nodes.flatMap((n) => n.records);
    let cost: CostBreakdown | null = zeroCost();
    for (const r of records) {
      const info = findModel(r.model, this.#table);
      cost = info && info.prices.length > 0 && cost ? addCost(cost, costNano(r.usage, info, r.at, this.#table)) : null;
    }
    return {
      requests: records.length,
      usage: sumUsage(records.map((r) => r.usage)),
      cost: cost && breakdownToUsd(cost),
    };
  }
}
