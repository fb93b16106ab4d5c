import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** 4 GiB: 8 forks of a 4K-token prompt on a Qwen3-0.6B shape (~115 KB a token) fit, 80 do not. */
const DEFAULT_SLOT_FILES_MAX_BYTES = 4 * 1024 ** 3;

/** What every slot file forkcache writes is called: `forkcache-<fan-out>-<n>.bin`. */
const SLOT_FILE_PREFIX = 'forkcache-';

/** A fan-out id as a part of a file name llama-server accepts (letters, digits, `-`, `_`, `.`). */
export function slotFileStem(fanOutId: string): string {
  return `${SLOT_FILE_PREFIX}${fanOutId.replace(/[^A-Za-z0-9_.-]/g, '_')}`;
}

interface Saved {
  name: string;
  tokens: number;
  bytes: number;
  usedAt: number;
}

/**
 * The files one fan-out keeps in llama-server's `--slot-save-path`: each fork's KV cache while
 * another fork has its slot (`<stem>-<n>.bin`), and the prefix copy (`<stem>-prefix.bin`). Their
 * total size (the server's `n_written`) stays under `maxBytes`: past it the least recently used
 * fork's file is dropped, and that fork computes its own turns again (the ledger shows it).
 *
 * `dir` is that folder as this machine sees it: with it a dropped file is deleted, and `close`
 * deletes them all; without it (a server elsewhere) they stay, and the summary says so once.
 */
export class SlotFiles {
  readonly stem: string;
  readonly maxBytes: number;
  readonly dir: string | undefined;
  readonly #saved = new Map<string, Saved>();
  readonly #written = new Set<string>();
  #next = 0;
  #tick = 0;
  /** Files dropped to stay under `maxBytes` (their forks recompute their own turns). */
  evictions = 0;

  constructor(options: { stem: string; maxBytes?: number | undefined; dir?: string | undefined }) {
    this.stem = options.stem;
    this.maxBytes = options.maxBytes ?? DEFAULT_SLOT_FILES_MAX_BYTES;
    this.dir = options.dir;
  }

  get prefixName(): string {
    return this.#mark(`${this.stem}-prefix.bin`);
  }

  /** The name a fork's state is saved under (its own while it has one; a spare one before). */
  nameFor(forkId: string): string {
    const held = this.#saved.get(forkId);
    if (held) return held.name;
    // never a dropped fork's name: a save of it may still be under way
    return this.#mark(`${this.stem}-${this.#next++}.bin`);
  }

  /** The fork's saved state, if it still has one; using it makes it the most recently used. */
  get(forkId: string): { name: string; tokens: number } | undefined {
    const held = this.#saved.get(forkId);
    if (held) held.usedAt = ++this.#tick;
    return held;
  }

  get totalBytes(): number {
    let sum = 0;
    for (const s of this.#saved.values()) sum += s.bytes;
    return sum;
  }

  /** A save succeeded: record it, and drop the least recently used files past the bound (ids returned). */
  saved(forkId: string, name: string, tokens: number, bytes: number): string[] {
    this.#saved.set(forkId, { name, tokens, bytes, usedAt: ++this.#tick });
    this.#mark(name); // dropped while the save was under way: written all the same
    const dropped: string[] = [];
    while (this.totalBytes > this.maxBytes && this.#saved.size > 0) {
      const [oldest] = [...this.#saved.entries()].sort((a, b) => a[1].usedAt - b[1].usedAt)[0]!;
      this.drop(oldest);
      this.evictions += 1;
      dropped.push(oldest);
    }
    return dropped;
  }

  /** The fork's file is of no more use (it ended, its save failed, or the bound dropped it). */
  drop(forkId: string): void {
    const held = this.#saved.get(forkId);
    if (!held) return;
    this.#saved.delete(forkId);
    if (this.#remove(held.name)) this.#written.delete(held.name);
  }

  /** Delete every file of the fan-out; returns the names that could not be (no `dir`). */
  close(): string[] {
    this.#saved.clear();
    const left: string[] = [];
    for (const name of this.#written) if (!this.#remove(name)) left.push(name);
    this.#written.clear();
    return left;
  }

  #mark(name: string): string {
    this.#written.add(name);
    return name;
  }

  #remove(name: string): boolean {
    if (!this.dir) return false;
    rmSync(join(this.dir, name), { force: true });
    return true;
  }
}

/**
 * `forkcache clean RUN`: the slot files one fan-out left in a save path (a crash, a kill -9);
 * `dryRun` lists them only. Returns their names.
 */
export function removeFanOutSlotFiles(dir: string, fanOutId: string, dryRun = false): string[] {
  const stem = `${slotFileStem(fanOutId)}-`;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const mine = names.filter((n) => n.startsWith(stem) && n.endsWith('.bin')).sort();
  if (!dryRun) for (const name of mine) rmSync(join(dir, name), { force: true });
  return mine;
}
