import type { ModelCatalogue } from '../../core/models/catalogue.ts';
import { dayStart } from '../../core/models/dates.ts';
import { estimateRun } from './estimate.ts';
import type { RunEstimate } from './estimate-types.ts';
import { type Assumptions, DEFAULT_ASSUMPTIONS, profileFork } from './estimate-profile.ts';

/** A fan-out's shape for the whole-run economics: what `forkcache economics --whole-run` is given. */
interface WholeRunInput {
  prefixTokens: number;
  directiveTokens: number;
  children: number;
  model: string;
  table: ModelCatalogue;
  /** YYYY-MM-DD; default today. */
  date?: string | undefined;
  /** F: a fresh agent's system prompt + tools. */
  freshTokens: number;
  /** Tokens of the file each child reads (as read_file returns it), and the reads it takes. */
  fileTokens: number;
  filePages?: number;
  /** `edit`: read, edit, re-read, report; `read`: read, report. */
  kind: 'edit' | 'read';
  /** Of the prefix, what the parent already cached (0 cold, P warm). */
  cachedPrefixTokens?: number;
  assumptions?: Assumptions;
  /** A fork request's `max_tokens`: only the spend cap's bound uses it. */
  maxTokens: number;
}

/** The default size of the file a child reads when none is given: a few hundred lines of code. */
export const DEFAULT_FILE_TOKENS = 2_000;

/**
 * Every turn of every child priced by the run estimator (src/integrations/economics/estimate.ts), the one
 * `forkcache run --dry-run` uses: the same cache rules, the same baselines, from a shape given
 * by hand instead of counted from a plan.
 */
export function wholeRunEconomics(input: WholeRunInput): RunEstimate {
  const a = input.assumptions ?? DEFAULT_ASSUMPTIONS;
  const fork = profileFork(
    {
      directiveTokens: input.directiveTokens,
      kind: input.kind,
      files: input.fileTokens > 0 ? [{ path: 'its file', tokens: input.fileTokens, pages: input.filePages ?? 1 }] : [],
    },
    a,
  );
  return estimateRun({
    model: input.model,
    table: input.table,
    at: input.date === undefined ? Date.now() : dayStart(input.date),
    sharedTokens: input.prefixTokens,
    cachedAtStart: input.cachedPrefixTokens ?? 0,
    warm: 'first-child',
    freshHeadTokens: input.freshTokens,
    forks: Array.from({ length: input.children }, () => fork),
    turnOverhead: a.turnOverhead,
    maxTokens: input.maxTokens,
  });
}
