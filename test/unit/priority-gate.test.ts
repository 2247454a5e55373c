import { describe, expect, it } from 'vitest';
import { createPriorityGate } from '../../src/lib/priority-gate.ts';

describe('priority gate', () => {
  it('When more enter than the limit, then the rest wait and are let in by priority, then by arrival', async () => {
    const gate = createPriorityGate(2);
    const order: string[] = [];
    const first = await gate.enter(5);
    const second = await gate.enter(5);
    const waiting = [
      gate.enter(3).then((leave) => (order.push('p3 first'), leave)),
      gate.enter(1).then((leave) => (order.push('p1'), leave)),
      gate.enter(3).then((leave) => (order.push('p3 second'), leave)),
    ];
    expect(gate.waiting).toBe(3);
    first();
    second();
    const [a, b] = await Promise.all([waiting[1]!, waiting[0]!]);
    expect(order).toEqual(['p1', 'p3 first']);
    expect(gate.waiting).toBe(1);
    a();
    const c = await waiting[2]!;
    expect(order).toEqual(['p1', 'p3 first', 'p3 second']);
    b();
    c();
    expect(gate.waiting).toBe(0);
  });

  it('When a holder leaves twice, then only one waiter is let in', async () => {
    const gate = createPriorityGate(1);
    const leave = await gate.enter(1);
    let admitted = 0;
    const next = gate.enter(1).then((l) => (admitted++, l));
    const third = gate.enter(1).then((l) => (admitted++, l));
    leave();
    leave();
    const l2 = await next;
    expect(admitted).toBe(1);
    expect(gate.waiting).toBe(1);
    l2();
    (await third)();
    expect(admitted).toBe(2);
  });
});
