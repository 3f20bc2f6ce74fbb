import type { FastifyRequest } from 'fastify';
import { HttpProblem } from '../../platform/http/http-problem.ts';

/**
 * Formats (https://hl7.org/fhir/R4/http.html#mime-type): this server produces JSON only, as
 * application/fhir+json. _format overrides Accept; either asking for something else is a 406.
 * Request bodies must be application/fhir+json or application/json, else 415.
 */

const jsonFormats = new Set(['json', 'application/json', 'application/fhir+json', 'application/json+fhir']);
const acceptableRanges = new Set(['*/*', 'application/*', 'application/json', 'application/fhir+json', 'application/json+fhir']);

export function assertAcceptable(request: FastifyRequest): void {
  const format = new URLSearchParams(request.url.split('?')[1] ?? '').get('_format');
  if (format !== null) {
    // An unencoded "+" (application/fhir+json) arrives as a space.
    if (!jsonFormats.has(format.trim().toLowerCase().replace(' ', '+'))) {
      throw new HttpProblem(406, 'not-acceptable', `_format ${JSON.stringify(format)} is not supported: this server produces JSON only`);
    }
    return;
  }
  const accept = request.headers.accept;
  if (accept === undefined || accept.trim() === '') return;
  const ok = accept.split(',').some((range) => {
    const [type, ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    if (q !== undefined && Number(q.slice(2)) === 0) return false;
    return acceptableRanges.has(type ?? '');
  });
  if (!ok) {
    throw new HttpProblem(406, 'not-acceptable', `cannot produce any of ${JSON.stringify(accept)}: this server produces application/fhir+json`);
  }
}

export function assertJsonBody(request: FastifyRequest): void {
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/fhir+json' && type !== 'application/json' && type !== 'application/json+fhir') {
    throw new HttpProblem(
      415,
      'unsupported-media-type',
      `Content-Type ${JSON.stringify(request.headers['content-type'] ?? '')} is not supported: send application/fhir+json`,
    );
  }
}
