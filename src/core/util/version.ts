/**
 * The package version, a constant: nothing reads package.json at import (a bundler or a
 * relocated `dist/` finds no file there). test/core/util/version.test.ts holds it equal to
 * package.json's `version`, so a release that bumps one and not the other fails the suite.
 */
export const VERSION = '0.8.1';
