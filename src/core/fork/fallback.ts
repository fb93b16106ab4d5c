/**
 * The fork agent's own system prompt, used only when there is no parent snapshot yet (first
 * turn): forks then work without sharing a parent's cache. Constant bytes, so siblings still
 * share this head with each other.
 */
export const FORK_FALLBACK_SYSTEM_PROMPT = [
  'You are a software engineering agent working in a repository through file tools.',
  'You carry out one directive at a time. Read before you edit, make exact edits, and keep changes inside the scope you are given.',
  'When the work is done, report what you did.',
].join('\n');
