import { expect } from 'chai';

/** A decider as STYLE.md describes it: pure functions over a state, commands and events. */
export interface Decider<S, C, E extends { type: string }> {
  initialState: () => S;
  evolve: (state: S, event: E) => S;
  decide: (command: C, state: S) => E[];
}

export interface Then<S, E extends { type: string }> {
  /** The decided events are exactly these. */
  then(...expected: E[]): void;
  /** The decided events have these types, in order (for rules about which transitions happen). */
  thenTypes(...types: E['type'][]): E[];
  /** Nothing happens. */
  thenNothing(): void;
  /** The command is refused with this error. */
  thenThrows(error: new (...args: never[]) => Error, message?: RegExp): void;
  /** The state after the given events and the decided ones, for rules about where it ends up. */
  thenState(): S;
}

/**
 * given(events).when(command).then(events): one behaviour of a decider per line, with no I/O.
 *
 *   const { given } = deciderSpec(subscriptionDecider);
 *   given(created, cancelled).when(resume).thenTypes('subscription.resumed');
 */
export function deciderSpec<S, C, E extends { type: string }>(decider: Decider<S, C, E>) {
  const fold = (events: readonly E[]) => events.reduce(decider.evolve, decider.initialState());
  return {
    given: (...history: E[]) => ({
      state: (): S => fold(history),
      when: (command: C): Then<S, E> => {
        const decide = () => decider.decide(command, fold(history));
        return {
          then: (...expected) => expect(decide()).to.deep.equal(expected),
          thenTypes: (...types) => {
            const decided = decide();
            expect(decided.map((e) => e.type)).to.deep.equal(types);
            return decided;
          },
          thenNothing: () => expect(decide()).to.deep.equal([]),
          thenThrows: (error, message) => expect(decide).to.throw(error, message),
          thenState: () => fold([...history, ...decide()]),
        };
      },
    }),
  };
}
