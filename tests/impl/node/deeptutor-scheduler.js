#!/usr/bin/env node
// deeptutor-scheduler, written by hand in JavaScript from the seed (../shared/seeds/000_*) and the
// readings of spec/deeptutor-scheduler.toml, speaking turnbound's wire protocol v1 on stdin/stdout.
// It shares no code with turnbound: it is the "other implementation" the conformance runner checks.
//
//   node deeptutor-scheduler.js            the correct scheduler
//   node deeptutor-scheduler.js --bug=X    a deliberately broken one (X in BUGS below)
'use strict';

const readline = require('node:readline');

const BUGS = {
  'no-extra-round': 'the forced finish does not add its extraRounds to rounds',
  'recovery-twice': 'after the recovery round, the exhausted boundary asks for recovery again',
  'dispatch-rejected': 'a recovery batch flagged recoveryRejected is dispatched',
  'partial-salvaged': 'a partial HostFailure is salvaged by a forced finish',
  'wrong-counters': 'the recovery round is counted as an exploration round',
  'empty-after-recovery': 'an empty recovery answer gets a forced finish instead of a rejection',
};

const bugArg = process.argv.slice(2).find((a) => a.startsWith('--bug='));
const BUG = bugArg ? bugArg.slice('--bug='.length) : null;
if (BUG !== null && !(BUG in BUGS)) {
  process.stderr.write(`unknown --bug=${BUG}; known: ${Object.keys(BUGS).join(', ')}\n`);
  process.exit(2);
}

// -- the host's runtime contract (the seed's contracts.ts checks) ---------------------------

const BOOL = { type: 'boolean' };
const OPTIONAL_FALSE = { type: 'boolean', default: false };
const CONTRACTS = {
  call_round: {
    facts: {
      hasTools: BOOL, hasText: BOOL, truncated: BOOL, reasoningBudgetExhausted: BOOL,
      recoveryRejected: OPTIONAL_FALSE, finishRedirect: OPTIONAL_FALSE,
    },
    raises: ['host_failure', 'abort'],
  },
  dispatch_tools: { facts: { paused: OPTIONAL_FALSE }, raises: ['abort'] },
  await_user: { facts: { resumed: BOOL }, raises: ['abort'] },
  prepare_recovery: { facts: { available: BOOL }, raises: ['abort'] },
  forced_finish: { facts: { extraRounds: { type: 'integer', min: 0, max: 1 } }, raises: ['abort'] },
  finish: { facts: {}, raises: ['abort'] },
  reject_finish: { facts: {}, raises: ['abort'] },
};
const FAILURE_FIELDS = { host_failure: { partial: BOOL }, abort: {} };

class Aborted extends Error {}
class ContractViolation extends Error {}
class HostFailure extends Error {
  constructor(partial) {
    super('HostFailure');
    this.partial = partial;
  }
}

function fits(spec, value) {
  if (spec.type === 'boolean') return typeof value === 'boolean';
  return Number.isInteger(value) && value >= spec.min && value <= spec.max;
}

function checked(specs, given, what) {
  const out = {};
  for (const name of Object.keys(given)) {
    if (!(name in specs)) throw new ContractViolation(`${what}: undeclared ${name}`);
  }
  for (const [name, spec] of Object.entries(specs)) {
    if (!(name in given)) {
      if (!('default' in spec)) throw new ContractViolation(`${what}: ${name} is missing`);
      out[name] = spec.default;
    } else if (!fits(spec, given[name])) {
      throw new ContractViolation(`${what}: ${name}=${JSON.stringify(given[name])} is out of range`);
    } else {
      out[name] = given[name];
    }
  }
  return out;
}

// -- protocol v1 ------------------------------------------------------------------------------

const pending = [];
const waiting = [];
let closed = false;
const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on('line', (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  if (waiting.length) waiting.shift()(msg);
  else pending.push(msg);
});
lines.on('close', () => {
  closed = true;
  while (waiting.length) waiting.shift()(null);
});

function receive() {
  if (pending.length) return Promise.resolve(pending.shift());
  if (closed) return Promise.resolve(null);
  return new Promise((resolve) => waiting.push(resolve));
}

function send(msg) {
  process.stdout.write(JSON.stringify(msg) + '\n');
}

const host = {
  async call(op, args) {
    send({ type: 'op', op, args });
    const msg = await receive();
    if (msg === null) throw new Error('turnbound closed the connection in the middle of a case');
    const contract = CONTRACTS[op];
    if (msg.type === 'raise') {
      if (!contract.raises.includes(msg.error)) throw new ContractViolation(`${op} may not raise ${msg.error}`);
      const { type, error, ...fields } = msg;
      const f = checked(FAILURE_FIELDS[error], fields, error);
      if (error === 'abort') throw new Aborted();
      throw new HostFailure(f.partial);
    }
    if (msg.type !== 'result') throw new Error(`expected result or raise, got ${JSON.stringify(msg)}`);
    return checked(contract.facts, msg.facts || {}, `${op} response`);
  },
};

// -- the scheduler ----------------------------------------------------------------------------

async function runTurn(params) {
  const explorationBudget = params.explorationBudget ?? 1;
  const settlementBudget = params.settlementBudget ?? 1;
  const emptyRecoveryBudget = params.emptyRecoveryBudget ?? 2;
  const counters = { rounds: 0, exploration_rounds: 0, settlement_rounds: 0, tool_steps: 0 };
  let recoveryUsed = false;
  let emptyRecoveries = 0;
  let reasoningRecoveries = 0;
  let redirectUsed = false;
  const end = (terminal) => ({ terminal, counters: { ...counters } });

  async function forcedFinish(reason) {
    const facts = await host.call('forced_finish', { reason });
    if (BUG !== 'no-extra-round') counters.rounds += facts.extraRounds;
    return end('forced_finish');
  }

  async function rejectFinish() {
    await host.call('reject_finish', {});
    return end('reject_finish');
  }

  try {
    for (;;) {
      // The loop boundary: exploration, then settlement, then one recovery offer, then rejection.
      let mode = 'exploration';
      let recovery = false;
      if (counters.exploration_rounds < explorationBudget) {
        mode = 'exploration';
      } else if (counters.settlement_rounds < settlementBudget) {
        mode = 'settlement';
      } else if (!recoveryUsed || BUG === 'recovery-twice') {
        const offer = await host.call('prepare_recovery', {});
        recoveryUsed = true;
        if (!offer.available) return await forcedFinish('budget');
        mode = 'settlement';
        recovery = true;
      } else {
        return await rejectFinish();
      }

      let round;
      try {
        round = await host.call('call_round', { mode, recovery });
      } catch (err) {
        if (!(err instanceof HostFailure)) throw err;
        const unsafe = BUG === 'partial-salvaged' ? counters.rounds === 0 : counters.rounds === 0 || err.partial;
        if (unsafe) return end('error');
        return await forcedFinish('error');
      }
      counters.rounds += 1;
      if (recovery && BUG === 'wrong-counters') counters.exploration_rounds += 1;
      else if (mode === 'exploration') counters.exploration_rounds += 1;
      else counters.settlement_rounds += 1;

      if (round.hasTools) {
        if (recoveryUsed && round.recoveryRejected && BUG !== 'dispatch-rejected') return await rejectFinish();
        const dispatched = await host.call('dispatch_tools', {});
        counters.tool_steps += 1;
        if (dispatched.paused) {
          const answer = await host.call('await_user', {});
          if (!answer.resumed) return end('paused');
        }
        continue;
      }
      if (round.reasoningBudgetExhausted) {
        if (reasoningRecoveries >= 1) return end('error');
        reasoningRecoveries += 1;
        continue;
      }
      if (round.truncated) continue;
      if (!round.hasText) {
        if (emptyRecoveries < emptyRecoveryBudget) {
          emptyRecoveries += 1;
          continue;
        }
        if (!recoveryUsed || BUG === 'empty-after-recovery') return await forcedFinish('budget');
        return await rejectFinish();
      }
      if (round.finishRedirect) {
        if (redirectUsed) return await rejectFinish();
        redirectUsed = true;
        continue;
      }
      await host.call('finish', {});
      return end('finish');
    }
  } catch (err) {
    if (err instanceof Aborted) return end('aborted');
    if (err instanceof ContractViolation) return end('contract_violation');
    throw err;
  }
}

async function main() {
  for (;;) {
    const msg = await receive();
    if (msg === null || msg.type === 'stop') return;
    if (msg.type !== 'start' || msg.protocol !== 1) {
      throw new Error(`expected a protocol 1 start message, got ${JSON.stringify(msg)}`);
    }
    const { terminal, counters } = await runTurn(msg.params || {});
    send({ type: 'end', terminal, counters });
  }
}

main().then(
  () => process.stdout.write('', () => process.exit(0)),
  (err) => process.stderr.write(`${err.stack || err}\n`, () => process.exit(1)),
);
