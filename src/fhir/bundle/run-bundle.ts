import type { BundleEntry as FhirBundleEntry } from '@medplum/fhirtypes';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { baseUrl } from '../http/resource-response.ts';
import { formPairs, preference, siteOf, type FhirContext } from '../routes/fhir-context.ts';
import { parseSearch } from '../search/parse-search.ts';
import { EntryProblem, type BundleEntry, type EntryMethod, type ParsedBundle } from './bundle-entries.ts';
import { entryFailure } from './entry-failure.ts';
import { sendEntry } from './entry-request.ts';
import { failedEntry, returnPreference } from './entry-response.ts';
import { isBundleLocalUrn, referencesIn } from './references.ts';
import { openTransactionScope } from '../routes/transaction-scope.ts';
import { assertDistinctCriteria, planWrite, runTransactionWrites } from './transaction-writes.ts';

/** http.html#transaction: deletes, then creates, then updates, then reads, whatever the Bundle's order. */
const processingOrder: Record<EntryMethod, number> = { DELETE: 0, POST: 1, PUT: 2, PATCH: 2, GET: 3, HEAD: 3 };

type Slot = ParsedBundle['entries'][number];

function inProcessingOrder(entries: readonly Slot[]): Slot[] {
  const rank = (slot: Slot) => ('problem' in slot ? -1 : processingOrder[slot.method]);
  return [...entries].sort((a, b) => rank(a) - rank(b) || a.index - b.index);
}

/**
 * A batch: every entry on its own, as a request of its own would be (its own database
 * transaction), answered in its entry whatever happened to the others.
 */
export async function runBatch(app: FastifyInstance, request: FastifyRequest, bundle: ParsedBundle): Promise<FhirBundleEntry[]> {
  const answers: FhirBundleEntry[] = new Array(bundle.entries.length);
  for (const slot of inProcessingOrder(bundle.entries)) {
    try {
      if ('problem' in slot) throw slot.problem;
      const local = referencesIn(slot.resource).find(({ reference }) => isBundleLocalUrn(reference));
      if (local) {
        throw new EntryProblem(400, 'invalid', `the reference ${local.reference} names another entry: entries of a batch are independent (http.html#brules); send a transaction`);
      }
      answers[slot.index] = await sendEntry(app, request, slot);
    } catch (error) {
      answers[slot.index] = failedEntry(error, request.id, request.url);
    }
  }
  return answers;
}

/**
 * A transaction: every write, then every read, in one database transaction, committed before the
 * answer, or nothing (transaction-writes.ts). The reads run through the routes a read of its own
 * takes, on the transaction (transaction-scope.ts), so they see its writes and nothing committed
 * by others after them. Their urls and search parameters are checked before anything is written,
 * so that a transaction with a malformed read changes nothing. A read that finds nothing is
 * answered in its entry; one whose statement fails (its timeout, the database) fails the whole.
 */
export async function runTransaction(app: FastifyInstance, context: FhirContext, request: FastifyRequest, bundle: ParsedBundle): Promise<FhirBundleEntry[]> {
  const site = siteOf(request);
  const entries: BundleEntry[] = bundle.entries.map((slot) => {
    if ('problem' in slot) throw entryFailure(slot, slot.problem);
    return slot;
  });
  const reads = entries.filter((entry) => entry.method === 'GET' || entry.method === 'HEAD');
  const strict = preference(request, 'handling') !== 'lenient';
  for (const read of reads) {
    if (read.target.interaction !== 'search-type') continue;
    try {
      parseSearch(read.definition, formPairs(read.url.split('?', 2)[1] ?? '', 'request.url'), strict);
    } catch (error) {
      throw entryFailure(read, error);
    }
  }
  const writes = entries.filter((entry) => !reads.includes(entry)).map((entry) => planWrite(entry, site));
  assertDistinctCriteria(writes);
  return context.services.database.transaction(async (tx) => {
    const written = await runTransactionWrites(tx, site, writes, baseUrl(request), returnPreference(preference(request, 'return')));
    const answers: FhirBundleEntry[] = entries.map((entry) => written.get(entry.index) ?? { response: { status: '' } });
    if (reads.length === 0) return answers;
    const scope = await openTransactionScope(tx, context.services.config.limits.search);
    for (const read of reads) {
      answers[read.index] = await context.transactionScopes.run(scope, () => sendEntry(app, request, read));
      if (scope.failure !== undefined) throw entryFailure(read, scope.failure);
    }
    return answers;
  });
}
