export interface SuiteOptions {
  /** Short runs (the whole bench under a minute). */
  quick: boolean;
}

export interface SuiteResult {
  name: string;
  title: string;
  rows: Record<string, unknown>[];
  /** What the numbers decided, in one sentence. */
  conclusion?: string;
  /** Set on suites kept by `--merge` from an earlier run: where and when they ran. */
  ranOn?: string;
}
