import { KeyedLimit } from '../../platform/keyed-limit.ts';

/**
 * Caps on concurrent associations, overall and per remote IP (issue 5, point 1), and on TCP
 * connections per remote IP before any association (issue 26, point 3).
 */
export class AssociationLimits extends KeyedLimit {}
