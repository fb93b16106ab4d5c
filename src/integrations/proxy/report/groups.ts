import type { RequestShape } from '../diagnosis/shape.ts';
import type { ThreadKind } from '../diagnosis/types.ts';

/** A fan-out: requests that branch from one shared prefix. */
export interface FanoutGroup {
  id: string;
  /** Sequence numbers of the branches' first requests, in the order sent. */
  members: number[];
  /** Position index (in the members' prompts) of the last shared block. */
  branchIndex: number;
}

export interface Placement {
  session: string;
  thread: string;
  kind: ThreadKind;
  fanout: FanoutGroup | undefined;
}

interface Prompt {
  seq: number;
  thread: string;
  session: string;
  kind: ThreadKind;
  successor: number | undefined;
  /** The fan-out this request branched into (undefined for a thread's later turns). */
  fanout: FanoutGroup | undefined;
}

const PROMPT_LIMIT = 50_000;
const FANOUT_KEY_LIMIT = 10_000;

function kindOf(shape: RequestShape): ThreadKind {
  if (shape.fork) return 'fork';
  return shape.billing?.subagent ? 'subagent' : 'main';
}

/**
 * Groups requests into sessions, threads (one agent's successive turns) and fan-outs, from
 * the prompts alone:
 * - a request whose prompt contains an earlier request's whole prompt continues that thread,
 *   unless the thread was already continued (then it is a branch: a fan-out from that prompt)
 *   or it is a fork child (the `<fork-boilerplate>` tag, or Claude Code's `cc_is_subagent`)
 *   branching from a main thread;
 * - a request that shares only part of an earlier prompt, into its messages, branches there
 *   (siblings sent together, none of which has an answer yet);
 * - the same prompt again, never continued, is a resend: the same branch of the same fan-out;
 * - otherwise it starts a thread. The session is Claude Code's session header when sent, else
 *   the first thread of the tree.
 */
export class Grouper {
  readonly #prompts = new Map<string, Prompt>();
  readonly #fanouts = new Map<string, FanoutGroup>();
  readonly #sessions = new Map<number, string>();
  #threads = 0;
  #fanOutIds = 0;

  place(
    seq: number,
    shape: RequestShape,
    shared: { index: number; seq: number } | undefined,
    sessionHeader: string | undefined,
  ): Placement {
    const kind = kindOf(shape);
    const { positions } = shape;
    let placement: Placement | undefined;
    let resend = false;
    for (let i = positions.length - 1; i >= 0 && !placement; i--) {
      const earlier = this.#prompts.get(positions[i]!.hash);
      if (!earlier) continue;
      const forkOfMain = kind !== 'main' && earlier.kind === 'main';
      if (i === positions.length - 1 && earlier.successor === undefined && earlier.kind === kind) {
        // the very prompt again, never continued: the client sent it once more (a refused or
        // dropped attempt); it is the same branch of the same fan-out, not a new one
        resend = true;
        placement = {
          session: sessionHeader ?? earlier.session,
          thread: earlier.thread,
          kind: earlier.kind,
          fanout: earlier.fanout,
        };
      } else if (earlier.successor === undefined && !forkOfMain) {
        earlier.successor = seq;
        placement = {
          session: sessionHeader ?? earlier.session,
          thread: earlier.thread,
          kind: earlier.kind,
          fanout: undefined,
        };
      } else {
        const fanout = this.#fanout(`after:${earlier.seq}`, i, earlier.successor);
        placement = { session: sessionHeader ?? earlier.session, thread: this.#newThread(), kind, fanout };
        earlier.successor ??= seq;
      }
    }
    if (!placement && shared && positions[shared.index]!.segment === 'messages') {
      const fanout = this.#fanout(`at:${positions[shared.index]!.hash}`, shared.index, shared.seq);
      placement = {
        session: sessionHeader ?? this.#sessions.get(shared.seq) ?? `s${seq}`,
        thread: this.#newThread(),
        kind,
        fanout,
      };
    }
    placement ??= { session: sessionHeader ?? `s${seq}`, thread: this.#newThread(), kind, fanout: undefined };
    if (!resend) placement.fanout?.members.push(seq);
    const prompt: Prompt = {
      seq,
      thread: placement.thread,
      session: placement.session,
      kind: placement.kind,
      successor: undefined,
      fanout: placement.fanout,
    };
    this.#sessions.set(seq, placement.session);
    if (this.#sessions.size > PROMPT_LIMIT) this.#sessions.delete(this.#sessions.keys().next().value!);
    this.#prompts.delete(shape.finalHash);
    this.#prompts.set(shape.finalHash, prompt);
    if (this.#prompts.size > PROMPT_LIMIT) this.#prompts.delete(this.#prompts.keys().next().value!);
    return placement;
  }

  #newThread(): string {
    return `t${++this.#threads}`;
  }

  #fanout(key: string, branchIndex: number, first: number | undefined): FanoutGroup {
    let group = this.#fanouts.get(key);
    if (!group) {
      group = { id: `fo${++this.#fanOutIds}`, members: first === undefined ? [] : [first], branchIndex };
      this.#fanouts.set(key, group);
      if (this.#fanouts.size > FANOUT_KEY_LIMIT) this.#fanouts.delete(this.#fanouts.keys().next().value!);
    }
    return group;
  }
}
