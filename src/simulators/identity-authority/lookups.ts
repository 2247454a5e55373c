import type { Response } from 'express';
import { latencyFor } from './latency.ts';
import { formatDmy, KNOWN_PHONE, personForDemography, personForNin, personForPhone, type SimDate, type SimPerson } from './persons.ts';
import type { SimSettings } from './settings.ts';
import type { Timers } from './timers.ts';
import type { VninRefusal, VninStore } from './vnins.ts';

/**
 * What the simulated authority does with a lookup, whichever dialect asked: who exists, the fault
 * NINs, and when the answer goes out. A dialect only reads its own request and writes the outcome
 * in its own bodies, so one NIN gives the same person, the same delay and the same fault in every
 * dialect. README.md in this folder describes the rules; they are binding for tests.
 */
export interface Answers {
  found(person: SimPerson): void;
  notFound(): void;
  /** 503 (unavailable), 504 (held, then timed out) or 429 (with Retry-After already set). */
  refused(status: 503 | 504 | 429, message: string): void;
  /** A vNIN the authority will not answer for, in the dialect's not-found shape with its own message. */
  vninRefused(why: VninRefusal): void;
}

export interface DemographyQuery {
  firstName: string;
  lastName: string;
  dob: SimDate;
  gender: 'm' | 'f';
}

export interface Lookups {
  nin(res: Response, nin: string, answers: Answers): void;
  /** A vNIN is checked when its answer goes out, then answered as its NIN (faults included); found uses it up. */
  vnin(res: Response, token: string, answers: Answers): void;
  phone(res: Response, phone: string, answers: Answers): void;
  demography(res: Response, q: DemographyQuery, answers: Answers): void;
  /** Anything but a valid lookup (bad input, reasons, unknown path) waits the fixed latency only. */
  plain(res: Response, send: () => void): void;
}

export function createLookups(deps: { settings: () => SimSettings; timers: Timers; vnins: VninStore }): Lookups {
  const { timers } = deps;
  // Per-NIN call counts for the "503 twice, then succeed" rule, shared by every dialect.
  const flakyCalls = new Map<string, number>();

  /** A valid lookup's delay: its own draw when a distribution is set, else the fixed latency. */
  function afterDelay(res: Response, seed: string, send: () => void): void {
    const s = deps.settings();
    timers.answerAfter(res, s.latency ? latencyFor(seed, s.latency) : s.latencyMs, send);
  }

  function ninAnswer(res: Response, nin: string, answers: Answers): void {
    if (nin.startsWith('5000')) {
      const n = (flakyCalls.get(nin) ?? 0) + 1;
      flakyCalls.set(nin, n);
      if (n <= 2) return answers.refused(503, 'Service temporarily unavailable');
    } else if (nin.startsWith('5001')) {
      return answers.refused(503, 'Service temporarily unavailable');
    } else if (nin.startsWith('5002')) {
      const cancel = timers.later(deps.settings().hangMs, () => {
        if (!res.headersSent) answers.refused(504, 'Upstream timeout');
      });
      res.on('close', cancel);
      return;
    } else if (nin.startsWith('5003')) {
      res.set('Retry-After', '1');
      return answers.refused(429, 'Too many requests');
    }
    if (nin.startsWith('0')) return answers.notFound();
    answers.found(personForNin(nin));
  }

  function vninAnswer(res: Response, token: string, answers: Answers): void {
    const checked = deps.vnins.check(token, Date.now());
    if ('refused' in checked) return answers.vninRefused(checked.refused);
    ninAnswer(res, checked.nin, {
      ...answers,
      found: (person) => {
        checked.use();
        answers.found(person);
      },
      notFound: () => answers.vninRefused('not_found'),
    });
  }

  return {
    nin: (res, nin, answers) => afterDelay(res, `nin:${nin}`, () => ninAnswer(res, nin, answers)),
    vnin: (res, token, answers) => afterDelay(res, `vnin:${token}`, () => vninAnswer(res, token, answers)),
    phone: (res, phone, answers) =>
      afterDelay(res, `phone:${phone}`, () => (KNOWN_PHONE.test(phone) ? answers.found(personForPhone(phone)) : answers.notFound())),
    demography: (res, q, answers) =>
      afterDelay(res, `demography:${demographySeed(q.firstName, q.lastName, formatDmy(q.dob), q.gender)}`, () =>
        /^z/i.test(q.lastName) ? answers.notFound() : answers.found(personForDemography(q)),
      ),
    plain: (res, send) => timers.answerAfter(res, deps.settings().latencyMs, send),
  };
}

/** The text a demographic query's latency is seeded from (names trimmed and lower-cased). */
export function demographySeed(firstName: string, lastName: string, dmy: string, gender: 'm' | 'f'): string {
  return [firstName.trim().toLowerCase(), lastName.trim().toLowerCase(), dmy, gender].join('|');
}
