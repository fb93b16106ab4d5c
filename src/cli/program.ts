import { Command } from 'commander';
import { VERSION } from '../version.ts';
import { registerCleanCommand } from './commands/clean.ts';
import { registerDemoCommand } from './commands/demo.ts';
import { registerDiffCommand } from './commands/diff.ts';
import { registerEconomicsCommand } from './commands/economics.ts';
import { registerEmulatorCommand } from './commands/emulator.ts';
import { registerInspectTranscriptCommand } from './commands/inspect-transcript.ts';
import { registerMergeCommand } from './commands/merge.ts';
import { registerModelsCommand } from './commands/models.ts';
import { registerPlanCommand } from './commands/plan.ts';
import { registerProxyCommand } from './commands/proxy.ts';
import { registerReportCommand } from './commands/report.ts';
import { registerResumeCommand } from './commands/resume.ts';
import { registerRunCommand } from './commands/run.ts';
import { registerStatusCommand } from './commands/status.ts';
import { registerWorkerCommand } from './commands/worker.ts';

/** Build the command tree. Each sub-command lives in its own file and registers itself here. */
export function createProgram(): Command {
  const program = new Command('forkcache')
    .description('Run LLM fork subagents in parallel on one byte-identical, prompt-cached prefix.')
    .version(VERSION, '-v, --version')
    .showHelpAfterError()
    .exitOverride((err) => {
      // commander exits 1 on usage errors; bad input is exit code 2 here.
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') process.exit(0);
      process.exit(err.exitCode === 0 ? 0 : 2);
    });
  registerDemoCommand(program);
  registerEconomicsCommand(program);
  registerEmulatorCommand(program);
  registerInspectTranscriptCommand(program);
  registerModelsCommand(program);
  registerPlanCommand(program);
  registerProxyCommand(program);
  registerReportCommand(program);
  registerRunCommand(program);
  registerResumeCommand(program);
  registerWorkerCommand(program);
  // review a run, apply its forks' branches, remove what it made (docs/review.md)
  registerStatusCommand(program);
  registerDiffCommand(program);
  registerMergeCommand(program);
  registerCleanCommand(program);
  return program;
}
