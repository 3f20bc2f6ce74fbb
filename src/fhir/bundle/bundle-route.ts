import type { FastifyInstance } from 'fastify';
import { assertJsonBody } from '../http/content-negotiation.ts';
import { baseUrl, sendJson } from '../http/resource-response.ts';
import type { FhirContext } from '../routes/fhir-context.ts';
import { registerMethodNotAllowed } from '../routes/method-not-allowed.ts';
import { fhirRoute, resourceResponses } from '../routes/route-options.ts';
import { parseBundle } from './bundle-entries.ts';
import { runBatch, runTransaction } from './run-bundle.ts';

/** batch and transaction (https://hl7.org/fhir/R4/http.html#transaction) at the service base. */
export function registerBundleRoute(app: FastifyInstance, context: FhirContext): void {
  const { maxEntries, maxBytes } = context.services.config.limits.fhirBundle;
  const schema = {
    summary: 'Process a batch or transaction Bundle',
    description:
      'https://hl7.org/fhir/R4/http.html#transaction. The entries may read (read, vread, history, search), create ' +
      '(conditionally with ifNoneExist) and update (conditionally with a search url) the types of GET /fhir/metadata, ' +
      'as they allow; delete and patch are not offered. A transaction runs its writes, then its reads, in one database transaction, committed ' +
      'before the answer, or nothing: the first entry that fails is named in the OperationOutcome (its index and fullUrl). ' +
      'urn:uuid: and urn:oid: fullUrls are resolved and every reference to them rewritten. A batch answers each entry on its ' +
      `own. At most ${maxEntries} entries (CG_FHIR_BUNDLE_MAX_ENTRIES) and ${maxBytes} bytes (CG_FHIR_BUNDLE_MAX_SIZE); ` +
      'more is a 413. Prefer: return=minimal | representation | OperationOutcome applies to every entry.',
    tags: ['system'],
    headers: { type: 'object', properties: { prefer: { type: 'string', description: 'return=minimal | representation | OperationOutcome; handling=strict | lenient for the searches' } } },
    body: {
      type: 'object',
      description: 'A Bundle of type batch or transaction (application/fhir+json)',
      properties: { resourceType: { type: 'string', enum: ['Bundle'] }, type: { type: 'string', enum: ['batch', 'transaction'] } },
      required: ['resourceType', 'type'],
      additionalProperties: true,
    },
    response: resourceResponses('Bundle (batch-response or transaction-response)', 200),
  };
  for (const url of ['/fhir', '/fhir/']) {
    app.post(url, fhirRoute(url === '/fhir' ? schema : { ...schema, hide: true }, { bodyLimit: maxBytes }), async (request, reply) => {
      assertJsonBody(request);
      const bundle = parseBundle(request.body, baseUrl(request), maxEntries);
      const entry = bundle.kind === 'batch' ? await runBatch(app, request, bundle) : await runTransaction(app, context, request, bundle);
      return sendJson(reply, 200, { resourceType: 'Bundle', type: `${bundle.kind}-response`, ...(entry.length > 0 ? { entry } : {}) });
    });
    registerMethodNotAllowed(app, url, ['POST'], 'system');
  }
}
