import { main } from './cli-main.ts';

// The `forkcache` process. Exit codes: 0 done, 1 a fork not done (or the work failed), 2 bad
// input, 3 the spend cap stopped the run, 130 Ctrl-C (docs/runs.md).
process.exitCode = await main(process.argv.slice(2));
