// `node --import ./record-optional-loads.mjs`: registers a resolve hook that appends every import
// of an optional peer dependency (echarts, bullmq, ioredis) to $FORKCACHE_OPTIONAL_LOG. CI runs
// `forkcache --version` and `import('forkcache')` under it and expects the log to stay empty.
// A hook, not a look at require.cache afterwards: it sees ESM imports (our code's only way in),
// and it records an attempt even when the package is absent and the import fails or is caught.
import { register } from 'node:module';

register('./optional-loads-hooks.mjs', import.meta.url);
