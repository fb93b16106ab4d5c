import { statSync } from 'node:fs';
import { ForkcacheError } from '../util/errors.ts';
import type { ResolvedEngineOptions } from './options.ts';

/**
 * A missing workspace was found fork by fork (each failed, exit 1) and a run directory that is
 * a file surfaced as a raw ENOTDIR: both are bad input, refused before anything starts. The
 * distributed backend's workspace lives on the worker hosts: not checked here.
 */
export function checkLocalPaths(options: ResolvedEngineOptions): void {
  const kind = (path: string): 'missing' | 'dir' | 'other' => {
    const stat = statSync(path, { throwIfNoEntry: false });
    return stat === undefined ? 'missing' : stat.isDirectory() ? 'dir' : 'other';
  };
  if (!options.distributed) {
    const workspace = kind(options.workspace);
    if (workspace !== 'dir') {
      throw new ForkcacheError(
        'INVALID_OPTION',
        `workspace: ${options.workspace} ${workspace === 'missing' ? 'does not exist' : 'is not a directory'}`,
        { data: { field: 'workspace' } },
      );
    }
  }
  if (options.runsDir !== undefined && kind(options.runsDir) === 'other') {
    throw new ForkcacheError('INVALID_OPTION', `runsDir: ${options.runsDir} is a file, not a directory`, {
      data: { field: 'runsDir' },
    });
  }
}
