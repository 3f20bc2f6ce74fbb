/**
 * Matching of PatientName by component group (PS3.5 6.2.1: alphabetic=ideographic=phonetic). The
 * index keeps a name whole (`Yamada^Tarou=山田^太郎=やまだ^たろう`), so a C-FIND for `Yamada^Tarou`,
 * the name a Japanese modality's worklist and every Latin-script workstation know, matched nothing
 * when compared with the whole string, and a QIDO-RS search for `山田*` nothing either. Here:
 *
 * - a query value of one group matches a name any of whose groups it matches (a workstation
 *   asks in the script it has, and cannot tell which group a modality wrote it in);
 * - a query value of several groups matches a name each of whose groups matches the one given in
 *   the same place (an empty group in the query matches anything).
 *
 * Case is ignored, as for the other names. The whole name must also contain a substring matching
 * each group: that condition follows from the others and lets the trigram index on the lower-case
 * name narrow the rows before the groups are compared.
 */
import { isUniversal, likePattern, type SqlParameters } from './matching.ts';

function groupCondition(column: string, index: number, pattern: string): string {
  return `split_part(lower(${column}), '=', ${index}) LIKE ${pattern}`;
}

export function personNameCondition(column: string, value: string | undefined, params: SqlParameters): string | undefined {
  if (isUniversal(value)) return undefined;
  const groups = value.replace(/^ +| +$/g, '').toLowerCase().split('=').slice(0, 3);
  const conditions: string[] = [];
  groups.forEach((group, index) => {
    if (isUniversal(group)) return;
    const pattern = likePattern(group);
    conditions.push(`lower(${column}) LIKE ${params.add(`%${pattern}%`)}`);
    const placed = params.add(pattern);
    conditions.push(groups.length === 1 ? `(${[1, 2, 3].map((i) => groupCondition(column, i, placed)).join(' OR ')})` : groupCondition(column, index + 1, placed));
  });
  return conditions.length > 0 ? conditions.join(' AND ') : undefined;
}
