import type { FileVersion } from '../jail/file-io.ts';

/**
 * The version of each file one fork last read or wrote (by real path). Forks share a
 * workspace, so an `edit_file` whose text is gone may simply be working on an old view:
 * comparing with the version the fork saw tells a sibling's change (a conflict the model can
 * retry after re-reading) from the model's own mistake.
 */
export class SeenVersions {
  readonly #seen = new Map<string, FileVersion>();

  see(real: string, version: FileVersion): void {
    this.#seen.set(real, version);
  }

  /** True when this fork saw the file and it has changed since (someone else wrote it). */
  changedSince(real: string, current: FileVersion): boolean {
    const seen = this.#seen.get(real);
    return seen !== undefined && seen !== current;
  }
}
