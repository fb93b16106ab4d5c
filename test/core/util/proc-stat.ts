import { readFileSync } from 'node:fs';

/** /proc's word on a process: its state, parent and process group; undefined once it is gone. */
export function procStat(pid: number | 'self'): { state: string; parent: number; group: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // the command name (in parentheses) may hold spaces: the fields after it are fixed
  const [state, parent, group] = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: state!, parent: Number(parent), group: Number(group) };
}
