import type { Scenario } from '../harness/scenario.ts';
import { backupUnderLoad } from './backup-under-load.ts';
import { commitWindow } from './commit-window.ts';
import { crashConsistency } from './crash-consistency.ts';
import { databaseOutage } from './database-outage.ts';
import { diskFull } from './disk-full.ts';
import { hostileInput } from './hostile-input.ts';
import { isolation } from './isolation.ts';
import { multiNode } from './multi-node.ts';
import { overload } from './overload.ts';

/** The campaign, in the order of issue 9, then several nodes (issue 21), then backup and restore under load. */
export const scenarios: Scenario[] = [crashConsistency, commitWindow, databaseOutage, diskFull, overload, hostileInput, isolation, multiNode, backupUnderLoad];
