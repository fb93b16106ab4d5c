import { ForkcacheError } from '../util/errors.ts';
import type { AgentStatus } from '../util/fork-status.ts';
import type { LedgerRecord, RequestKind } from './records.ts';

/** What an agent in the tree is: the main agent, a fork child, or an ordinary sub-agent. */
export type AgentKind = 'parent' | 'fork' | 'fresh';

/** One agent and the requests it sent. Internal: the ledger hands out copies. */
export interface AgentNode {
  id: string;
  /** Undefined while the agent is only known as somebody's parent. */
  kind: AgentKind | undefined;
  parentId: string | undefined;
  status: AgentStatus;
  children: string[];
  records: LedgerRecord[];
}

function invalid(field: string, message: string): ForkcacheError {
  return new ForkcacheError('LEDGER_INVALID_RECORD', `ledger record ${field}: ${message}`, { data: { field } });
}

/** The agent kind a request implies; a warm-up is sent by an agent that fans out. */
function kindOf(kind: RequestKind): AgentKind | undefined {
  return kind === 'warmup' ? undefined : kind;
}

/** The agents and their parent links. Validates before it mutates, so a bad record changes nothing. */
export class AgentTree {
  readonly #nodes = new Map<string, AgentNode>();

  get(id: string): AgentNode | undefined {
    return this.#nodes.get(id);
  }

  /** Like `get`, but an unknown id is `LEDGER_UNKNOWN_FORK`. */
  require(id: string): AgentNode {
    const node = this.#nodes.get(id);
    if (!node) throw new ForkcacheError('LEDGER_UNKNOWN_FORK', `unknown fork id "${id}"`, { data: { forkId: id } });
    return node;
  }

  nodes(): AgentNode[] {
    return [...this.#nodes.values()];
  }

  /** Attach a validated record to its agent, creating the agent (and its parent) if needed. */
  add(record: LedgerRecord): void {
    const existing = this.#nodes.get(record.forkId);
    const implied = kindOf(record.kind);
    if (existing?.kind === 'fork' && record.kind === 'warmup') {
      throw invalid('kind', `"${record.forkId}" is a fork child; forks do not fan out, so it cannot send a warm-up`);
    }
    if (existing?.kind !== undefined && implied !== undefined && existing.kind !== implied) {
      throw invalid('kind', `"${record.forkId}" is a ${existing.kind} agent, not ${implied}`);
    }
    if (record.parentId !== undefined) this.#checkParent(record.forkId, record.parentId, existing);
    const node = existing ?? this.#create(record.forkId, undefined);
    // A warm-up before the agent's own first turn can only come from a main agent.
    node.kind ??= implied ?? 'parent';
    if (record.parentId !== undefined && node.parentId === undefined) this.#link(node, record.parentId);
    node.records.push(record);
  }

  /** Record a status change; unknown agents are created (a fork may fail before any request). */
  setStatus(id: string, status: AgentStatus, parentId: string | undefined, kind: 'fork' | 'fresh'): void {
    const existing = this.#nodes.get(id);
    if (existing && existing.status !== 'running' && existing.status !== status) {
      throw new ForkcacheError(
        'LEDGER_INVALID_STATUS',
        `fork "${id}" is already ${existing.status}; cannot become ${status}`,
        {
          data: { forkId: id, from: existing.status, to: status },
        },
      );
    }
    if (parentId !== undefined) this.#checkParent(id, parentId, existing);
    const node = existing ?? this.#create(id, kind);
    node.kind ??= kind;
    if (parentId !== undefined && node.parentId === undefined) this.#link(node, parentId);
    node.status = status;
  }

  /** The agent and all its descendants, depth first. */
  subtree(id: string): AgentNode[] {
    const out: AgentNode[] = [];
    const stack = [this.require(id)];
    for (let node = stack.pop(); node; node = stack.pop()) {
      out.push(node);
      for (const child of [...node.children].reverse()) {
        const next = this.#nodes.get(child);
        if (next) stack.push(next);
      }
    }
    return out;
  }

  #checkParent(id: string, parentId: string, existing: AgentNode | undefined): void {
    if (existing?.parentId !== undefined && existing.parentId !== parentId) {
      throw invalid('parentId', `"${id}" already has parent "${existing.parentId}", not "${parentId}"`);
    }
    // Walking up from the new parent must never reach the child: the tree has no cycles.
    for (let at: string | undefined = parentId; at !== undefined; at = this.#nodes.get(at)?.parentId) {
      if (at === id) throw invalid('parentId', `"${parentId}" as the parent of "${id}" would make a cycle`);
    }
  }

  #create(id: string, kind: AgentKind | undefined): AgentNode {
    const node: AgentNode = { id, kind, parentId: undefined, status: 'running', children: [], records: [] };
    this.#nodes.set(id, node);
    return node;
  }

  #link(node: AgentNode, parentId: string): void {
    const parent = this.#nodes.get(parentId) ?? this.#create(parentId, undefined);
    node.parentId = parentId;
    parent.children.push(node.id);
  }
}
