// Module hooks for record-optional-loads.mjs (they run on Node's hooks thread).
import { appendFileSync } from 'node:fs';

const OPTIONAL = /^(echarts|bullmq|ioredis)(\/|$)/;

export async function resolve(specifier, context, next) {
  const log = process.env.FORKCACHE_OPTIONAL_LOG;
  if (log && OPTIONAL.test(specifier)) appendFileSync(log, `${specifier} imported from ${context.parentURL}\n`);
  return next(specifier, context);
}
