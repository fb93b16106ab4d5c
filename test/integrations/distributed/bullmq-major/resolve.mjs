// The module resolution hook of register.mjs: `bullmq` becomes the package it was given.
let as = 'bullmq';

export function initialize(data) {
  as = data.as;
}

export function resolve(specifier, context, next) {
  return next(specifier === 'bullmq' ? as : specifier, context);
}
