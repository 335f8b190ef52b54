/**
 * The one empty list that per-message and per-connection lists start as. It is frozen, so a push
 * into it throws: whoever adds the first item makes a list of its own, sized to fit (an array
 * grown from empty by push reserves 17 slots, for every header or connection that has one).
 */
export const EMPTY_LIST: never[] = Object.freeze([]) as never[];
