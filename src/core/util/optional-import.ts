import { ForkcacheError } from './errors.ts';

/**
 * Optional peer dependencies, with the ranges package.json declares for them (a test keeps the
 * two in step). They are loaded on first use only, so `import 'forkcache'` and
 * `forkcache --version` never pay for them, and an install without them still runs everything
 * else.
 */
export const OPTIONAL_PEERS = {
  report: ['echarts@^6.1.0'],
  // bullmq 6 made ioredis a peer (beside redis and pg): forkcache hands it an ioredis connection either way
  distributed: ['bullmq@^5.81.5 || ^6.7.6', 'ioredis@^5.11.1'],
  // 1.32.x only: the Streamable HTTP transport and registerTool's schemas changed between minors.
  mcp: ['@modelcontextprotocol/sdk@~1.32.2'],
  // the runtime and its grammars are built together: a minor may change the grammars' node types
  'check-file': ['@vscode/tree-sitter-wasm@~0.3.1'],
  // never imported by forkcache itself: the app that uses forkcache/ai-sdk imports them (either
  // major: ai 7 and its providers need Node 22, so the tests run 6.x on Node 20 and 7.x beside it)
  'ai-sdk': [
    'ai@^6.0.325 || ^7.0.173',
    '@ai-sdk/anthropic@^3.0.140 || ^4.0.105',
    '@ai-sdk/openai@^3.0.139 || ^4.0.118',
    '@ai-sdk/openai-compatible@^2.0.92 || ^3.0.92',
  ],
} as const;

export type OptionalFeature = keyof typeof OPTIONAL_PEERS;

const FEATURE_NAMES: Record<OptionalFeature, string> = {
  report: 'the HTML report',
  distributed: 'the distributed backend',
  mcp: 'forkcache mcp (the MCP server)',
  'check-file': 'forkcache check-file (the parser check)',
  'ai-sdk': 'forkcache/ai-sdk (the AI SDK fork tool)',
};

/** A spec as one shell word: a range with alternatives (`bullmq@^5.81.5 || ^6.7.6`) is quoted. */
const shellWord = (spec: string): string => (spec.includes(' ') ? `'${spec}'` : spec);

/** `echarts@^6.1.0` → `echarts` (scoped names keep their leading `@`). */
function packageName(spec: string): string {
  return spec.slice(0, spec.indexOf('@', 1));
}

/**
 * Run `load` (a dynamic `import()` of the module that uses the feature's packages). When Node
 * cannot find one of those packages, throw one `DEPENDENCY_MISSING` error that says what to
 * install, instead of a resolver message naming a file inside dist/. Any other failure,
 * including a missing package that is not the feature's, is rethrown as it is.
 */
export async function importOptional<T>(feature: OptionalFeature, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
    const specs = OPTIONAL_PEERS[feature];
    // Node: "Cannot find package 'echarts' imported from …" (also for subpaths such as echarts/core)
    const missing = specs.filter((spec) => typeof message === 'string' && message.includes(`'${packageName(spec)}'`));
    if (code !== 'ERR_MODULE_NOT_FOUND' || missing.length === 0) throw err;
    const names = specs.map(packageName).join(' and ');
    const absent = missing.map(packageName).join(' and ');
    const peers = specs.length === 1 ? 'an optional peer dependency' : 'optional peer dependencies';
    throw new ForkcacheError(
      'DEPENDENCY_MISSING',
      `${FEATURE_NAMES[feature]} needs ${names} (${peers} of forkcache, not installed with it); ${absent} cannot be found: run npm install ${specs.map(shellWord).join(' ')}`,
      {
        cause: err,
        data: { feature, packages: specs.map(packageName) },
      },
    );
  }
}
