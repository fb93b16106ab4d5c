import { lockRunDir } from '../../core/run-dir/writer-lock.ts';

/**
 * Run `work` holding the run directory's writer lock, the one `run` and `resume` hold
 * while their forks work (issue 33: `clean` during a run deleted a live fork's worktree and
 * branch). Refused at once with RUN_DIR_LOCKED, naming the holder, while a run holds it.
 */
export async function withRunLock<T>(dir: string, work: () => Promise<T>): Promise<T> {
  const lock = lockRunDir(dir);
  try {
    return await work();
  } finally {
    lock.release();
  }
}
