// Type tests: compiled by `npm run typecheck` (tsc), never run. The tool flags are declared
// once (src/core/tools/tool-flags.ts); every shape on their way to the forks' tools is derived from
// that declaration, and the distributed job's rule list must name each before anything compiles.
import { expectTypeOf } from 'vitest';
import type { EngineSettings, ForkEngineOptions, ToolExecutor, ToolExecutorOptions } from '../../src/index.ts';
import type { ResolvedEngineOptions } from '../../src/core/engine/options.ts';
import type { DispatchSettings } from '../../src/core/pool/fork-dispatch.ts';
import type { ForkTask } from '../../src/core/pool/protocol.ts';
import type { ToolContext } from '../../src/core/tools/context.ts';
import type { ToolFlagName, ToolFlagOptions, ToolFlags } from '../../src/core/tools/tool-flags.ts';
import type { ForkJobData } from '../../src/integrations/distributed/keys.ts';
import { JOB_RULES, type RuleTree } from '../../src/integrations/distributed/jobs/rules.ts';
import type { HostSettings } from '../../src/integrations/distributed/host/policy.ts';
import type { ManifestEngine } from '../../src/core/run-dir/manifest.ts';

// Every flag is an engine option, a resolved setting, and reaches the dispatch settings.
expectTypeOf<Pick<ForkEngineOptions, ToolFlagName>>().toEqualTypeOf<Partial<ToolFlags>>();
expectTypeOf<Pick<EngineSettings, ToolFlagName>>().toEqualTypeOf<ToolFlags>();
expectTypeOf<ResolvedEngineOptions>().toExtend<DispatchSettings>();
expectTypeOf<DispatchSettings>().toExtend<ToolFlags>();

// The worker's task carries every flag, the host's task as well; the executor takes each as
// an option, holds them, and hands them to every tool.
expectTypeOf<ForkTask['tools']['flags']>().toEqualTypeOf<ToolFlags>();
expectTypeOf<HostSettings['tools']['flags']>().toEqualTypeOf<ToolFlags>();
expectTypeOf<Pick<ToolExecutorOptions, ToolFlagName>>().toEqualTypeOf<ToolFlagOptions>();
expectTypeOf<ToolExecutor['flags']>().toEqualTypeOf<Readonly<ToolFlags>>();
expectTypeOf<ToolContext['flags']>().toEqualTypeOf<Readonly<ToolFlags>>();

// The manifest keeps every flag (an older run's absent one parses as off).
expectTypeOf<Pick<ManifestEngine, ToolFlagName>>().toEqualTypeOf<ToolFlags>();

// Every flag is a field of the distributed job, and the rule list names it ...
expectTypeOf<ToolFlagName>().toExtend<keyof ForkJobData['tools']>();
expectTypeOf(JOB_RULES).toEqualTypeOf<RuleTree<ForkJobData>>();

// ... because a rule list that misses a field of the job does not compile: a flag added to
// the list without its host rule fails here and in src/integrations/distributed/jobs/rules.ts.
type WithUnruled = Omit<ForkJobData, 'tools'> & { tools: ForkJobData['tools'] & { unruledFlag?: boolean | undefined } };
expectTypeOf<RuleTree<ForkJobData>>().not.toExtend<RuleTree<WithUnruled>>();
expectTypeOf<Exclude<RuleTree<WithUnruled>['tools'], { rule: string }>>().toHaveProperty('unruledFlag');

// A rule is a rule: a flag's entry cannot be a boolean standing in for one.
type ToolRules = Exclude<RuleTree<ForkJobData>['tools'], { rule: string }>;
expectTypeOf<true>().not.toExtend<ToolRules['network']>();
