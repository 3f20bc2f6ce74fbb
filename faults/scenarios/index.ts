import type { Scenario } from '../harness/scenario.ts';
import { crashConsistency } from './crash-consistency.ts';

/** The campaign, in the order of issue 9. */
export const scenarios: Scenario[] = [crashConsistency];
