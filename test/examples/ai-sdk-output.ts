import { expect } from 'vitest';

/**
 * What examples/ai-sdk/ai-sdk.ts prints when it did its job, on either major of the AI SDK
 * (test/examples/ai-sdk.test.ts runs it on `ai` 6, test/clients/ai-sdk-7.test.ts on `ai` 7).
 */
export function expectForkedTwenty(stdout: string): void {
  expect(stdout).toMatch(/^forks: 20, completed: 20, cache efficiency (1\.000|0\.99\d)$/m);
  expect(stdout).toMatch(/^tool calls by the children: search_tickets 20, lookup_user 20, add_comment 20$/m);
  expect(stdout).toMatch(/^agent: The children reported/m);
  expect(stdout).toMatch(/^ledger: \d+ requests \(the agent and its 20 forks\), cache read \d+ tokens, cost \$\d/m);
  // the fan-out's cache efficiency against the request the program itself sent, as the API counted it
  const own = /^against the agent's own request \((\d+) tokens\): 20 first requests read (\d+) of it, efficiency (\d\.\d{3})$/m.exec(
    stdout,
  );
  expect(own, stdout).not.toBeNull();
  expect(Number(own![1])).toBeGreaterThan(1024);
  expect(Number(own![2])).toBeGreaterThanOrEqual(19 * 0.99 * Number(own![1]));
  expect(Number(own![3])).toBeGreaterThanOrEqual(0.99);
}

/** What examples/ai-sdk/openai-background.ts prints when the 10 background forks reported in a later turn. */
export function expectBackgroundTen(stdout: string): void {
  expect(stdout).toMatch(/^agent: The forks run in the background/m);
  expect(stdout).toMatch(/^pending: fo\S+ \(10 forks\)$/m);
  // the ask, the call of the fork tool and its answer, the agent's reply, the reports
  expect(stdout).toMatch(/^agent, later \(5 messages in\): The background forks reported: 10 completed/m);
  expect(stdout).toMatch(
    /^ledger: \d+ requests \(the agent's 3 turns and its 10 forks\), cache efficiency (1\.000|0\.99\d)/m,
  );
}
